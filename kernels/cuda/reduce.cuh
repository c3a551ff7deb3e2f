// reduce (kernels/builtin_reduce.c): the reduction's tail loop.
//@ tail
        }
    }
    for (; k < r; k++) { float v = p[k * inner]; const int u = 0; const long long kk = k; (void)kk;
