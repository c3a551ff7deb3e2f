#!/bin/sh
# Turns a device-code file into a C string constant, so the same file is
# #included by the C compiler and handed to NVRTC as source text.
# usage: scripts/cuh2c.sh FILE NAME > out.h
set -eu
printf '/* generated from %s; do not edit */\nstatic const char %s[] =\n' "$1" "$2"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$1"
printf ';\n'
