// the level-3 graph kernels (kernels/graph/builtin_graph3.c): the GRU cell update.
//@ gru_update
    const float rg = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float zg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float ng = tanhf(gx[2] + rg * gh[2]);
    const float h = (1.0f - zg) * ng + zg * hprev;
