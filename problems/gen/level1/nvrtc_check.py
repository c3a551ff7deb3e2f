#!/usr/bin/env python3
"""Compiles CUDA candidate files with NVRTC (through ctypes, as the engine
will: one program per file, no host code) and reports each failure with its
log. The launch block is a comment, so whole files compile.

    python3 problems/gen/level1/nvrtc_check.py [--lib PATH] [--arch sm_90] FILE...

Prints "compiled N files, M failed"; exit 1 on any failure, 2 without NVRTC."""
import argparse, ctypes, os, sys

def load(path):
    cands = [path] if path else []
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    cands += [os.path.join(home, "lib64", "libnvrtc.so"), "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"]
    for c in cands:
        try:
            return ctypes.CDLL(c)
        except OSError:
            pass
    return None

def compile_one(lib, src, name, arch):
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
    if rc:
        return "nvrtcCreateProgram failed (%d)" % rc
    opts = [b"--gpu-architecture=" + arch.encode(), b"-default-device"]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value + 1)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc:
        return log.value.decode(errors="replace").strip() or "error %d" % rc
    return None

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=None)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    lib = load(a.lib)
    if lib is None:
        print("NVRTC not found")
        return 2
    bad = 0
    for f in a.files:
        with open(f) as fp:
            err = compile_one(lib, fp.read(), os.path.basename(f), a.arch)
        if err:
            bad += 1
            print("FAIL %s\n%s" % (f, err))
    print("compiled %d files, %d failed" % (len(a.files), bad))
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
