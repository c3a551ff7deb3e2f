#!/bin/sh
# kforge pack refuses to write a tarball that its own `dataset verify` and
# `fetch` would refuse as a bomb (issue 39): a store holding a huge, highly
# compressible text (a server's padded reply) packs into a tarball that
# expands far more than the verify bound (DS_EXPAND_RATIO times its size).
. "$KF_ROOT/tests/lib.sh"
FIX="python3 $KF_ROOT/tests/tools/dsfixture.py"
"$KFORGE" store init >/dev/null && $FIX "$KFORGE_DB" --kernels 10 --problems 1 || { nok "fixture store"; exit 1; }
expect_exit 0 "the fixture store packs" "$KFORGE" pack --version 1.0.0 -o ok
expect_exit 0 "... and verifies" "$KFORGE" dataset verify ok/kforge-kernelbench-1.0.0.tar.zst
# 50 MB of "abab...": in the store copy and in data/llm_calls.jsonl
sqlite3 "$KFORGE_DB" "update llm_calls set response = replace(hex(zeroblob(25000000)), '00', 'ab') where rowid = (select min(rowid) from llm_calls)"
expect_exit 1 "a store that packs into a bomb is refused" "$KFORGE" pack --version 1.0.0 --gz -o bomb
contains "... saying verify would refuse it" "$T_TMP/err" 'dataset verify would refuse this tarball.*extracted size'
check "... and writing no tarball" sh -c '! ls bomb 2>/dev/null | grep -q tar'
check "... nor a temporary file" sh -c '! ls -A bomb 2>/dev/null | grep -q .'
