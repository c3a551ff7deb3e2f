"""Output-size formulas and the conv code of problems/gen/level1/gen_b.py (level 1),
shared with the level-2 generator."""
import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("refgen_gen", os.path.join(_HERE, "..", "level1", "gen_b.py"))
refgen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(refgen)

conv_out = refgen.conv_out          # (n, k, s, p, d)
convt_out = refgen.convt_out        # (n, k, s, p, d, output_padding)
pool_out = refgen.pool_out          # (n, k, s, p, d, ceil)
taps_conv = refgen.taps_conv        # (n_in, n_out, k, s, p, d)
taps_convt = refgen.taps_convt
pad3 = refgen.pad3
conv_code = refgen.conv_code        # (transposed, weight, R, store): the conv body
conv_channels = refgen.conv_channels


def small_convs():
    """Small trees: several output channels per conv thread at any size."""
    refgen.CONV_MIN_THREADS = 0
GT = refgen.gemm_tiled         # the tiled double GEMM body


def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r
