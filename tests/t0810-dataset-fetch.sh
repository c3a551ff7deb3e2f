#!/bin/sh
# kforge dataset fetch from a loopback HTTP server: download, SHA-256,
# resume of an interrupted download, safe extraction; hostile tarballs
# (../, absolute path, escaping symlink, hard link, device node, too big,
# a zip bomb, a flood of empty entries, sparse files, overlong names) are
# refused without writing outside the target; --verify checks the dataset
# before anything is extracted.
. "$KF_ROOT/tests/lib.sh"
"$KFORGE" store init >/dev/null && python3 "$KF_ROOT/tests/tools/dsfixture.py" "$KFORGE_DB" --kernels 30 --problems 2 ||
	{ nok "fixture store"; exit 1; }
"$KFORGE" pack --version 2.0.0 -o srv >/dev/null || { nok "pack"; exit 1; }
TZ=kforge-kernelbench-2.0.0.tar.zst
SUM=$(sha256sum "srv/$TZ" | cut -d' ' -f1)

# Hostile tarballs, made with Python's tarfile.
python3 - <<'PY'
import io, tarfile
def make(name, entries):
    t = tarfile.open("srv/" + name, "w:gz")
    for ti, data in entries:
        t.addfile(ti, io.BytesIO(data) if data is not None else None)
    t.close()
def f(name, data=b"x\n"):
    ti = tarfile.TarInfo(name); ti.size = len(data); return ti, data
def special(name, kind, target=""):
    ti = tarfile.TarInfo(name); ti.type = kind; ti.linkname = target; return ti, None
make("dotdot.tar.gz", [f("README.md"), f("../escaped")])
make("dotdot2.tar.gz", [f("a/../../escaped")])
make("absolute.tar.gz", [f("README.md"), f("/tmp/kforge-absolute-escape-test")])
make("symlink.tar.gz", [special("link", tarfile.SYMTYPE, "../.."), f("link/escaped")])
make("hardlink.tar.gz", [special("hl", tarfile.LNKTYPE, "/etc/passwd")])
make("device.tar.gz", [special("dev", tarfile.CHRTYPE)])
make("fifo.tar.gz", [special("fifo", tarfile.FIFOTYPE)])
make("big.tar.gz", [f("README.md"), f("big.bin", b"\0" * (3 << 20))])
make("ok.tar.gz", [f("README.md"), f("sub/dir/file.txt")])
make("dotslash.tar.gz", [f("README.md"), f("./data/x")])
make("dirdotdot.tar.gz", [special("a/../../escaped-dir/", tarfile.DIRTYPE)])
make("absdir.tar.gz", [special("/tmp/kforge-absolute-dir-test/", tarfile.DIRTYPE)])
make("hardlink2.tar.gz", [f("README.md"), special("hl", tarfile.LNKTYPE, "README.md")])
# 8 MiB of zeros gzip to 8 KB: over 200 times the tarball's size.
make("bomb.tar.gz", [f("README.md"), f("bomb.bin", b"\0" * (8 << 20))])
# 12000 empty files in 75 KB: more than one entry per 16 bytes (and so
# 12000 empty directories).
make("empties.tar.gz", [f("e/%05d" % i, b"") for i in range(12000)])
make("emptydirs.tar.gz", [special("d%05d/" % i, tarfile.DIRTYPE) for i in range(12000)])
make("longname.tar.gz", [f("README.md"), f("/".join(["d" * 100] * 11))])
# A sparse file: 64 MiB of holes around one byte, in pax (GNU.sparse 0.1).
ti = tarfile.TarInfo("sparse.bin"); ti.size = 1
ti.pax_headers = {"GNU.sparse.size": str(64 << 20), "GNU.sparse.numblocks": "1",
                  "GNU.sparse.map": "%d,1" % ((64 << 20) - 1)}
make("sparse.tar.gz", [f("README.md"), (ti, b"x")])
PY
# The old GNU sparse type ('S') too, where GNU tar is there to write it.
if tar --version 2>/dev/null | grep -q GNU; then
	mkdir sp && truncate -s 64M sp/holes && printf x >>sp/holes &&
		tar --format=gnu -Scf - -C sp holes | gzip >srv/sparsegnu.tar.gz
fi
# A dataset whose checksums no longer hold (a byte of kforge.db changed).
command -v zstd >/dev/null && python3 - "srv/$TZ" <<'PY'
import io, subprocess, sys, tarfile
raw = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True, check=True).stdout
src = tarfile.open(fileobj=io.BytesIO(raw))
out = tarfile.open("srv/tampered.tar.gz", "w:gz", format=tarfile.PAX_FORMAT)
for ti in src.getmembers():
    data = src.extractfile(ti).read()
    if ti.name == "kforge.db":
        data = data[:100] + bytes([data[100] ^ 1]) + data[101:]
    out.addfile(ti, io.BytesIO(data))
out.close()
PY

python3 "$KF_ROOT/tests/tools/rangeserver.py" srv port log --cut 5000 &
SRV=$!
trap 'kill $SRV 2>/dev/null; rm -rf "$T_TMP"' EXIT
for i in $(seq 50); do [ -s port ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat port)"
# The server cuts the first download of each file at 5000 bytes: a first
# try leaves the part that the next one resumes.
prime() { "$KFORGE" dataset fetch "$URL/$1" -o "$2" >/dev/null 2>&1; }

expect_exit 1 "an interrupted download fails" "$KFORGE" dataset fetch "$URL/$TZ" --sha256 "$SUM" -o dl
contains "... and keeps the partial file to resume" "$T_TMP/err" "partial download kept"
check "the partial file holds the first bytes" sh -c "test \"\$(stat -c %s dl/$TZ.part)\" = 5000"
expect_exit 0 "fetch again resumes and succeeds" "$KFORGE" dataset fetch "$URL/$TZ" --sha256 "$SUM" -o dl
contains "reports the resume" "$T_TMP/out" "\\(resumed\\)"
contains "the server saw a Range request" log "GET /$TZ bytes=5000-"
check "the download is byte-identical" cmp -s "srv/$TZ" "dl/$TZ"
check "no .part file left" test ! -e "dl/$TZ.part"
check "extracted into DIR/<name>" test -s dl/kforge-kernelbench-2.0.0/README.md
expect_exit 0 "fetch --verify checks the dataset too" "$KFORGE" dataset fetch "$URL/$TZ" --sha256 "$SUM" -o dl2 --verify
contains "... and says it is OK" "$T_TMP/out" "kforge-kernelbench-2.0.0.tar.zst: OK"
expect_exit 4 "fetch --verify of a tarball that is not a dataset exits 4" "$KFORGE" dataset fetch "$URL/ok.tar.gz" -o dl3 --verify
contains "... listing the problems" "$T_TMP/err" "SHA256SUMS is missing"
check "... and extracts nothing" test ! -e dl3/ok
check "... and removes the download" test ! -e dl3/ok.tar.gz
if [ -s srv/tampered.tar.gz ]; then
	prime tampered.tar.gz dl4
	expect_exit 4 "fetch --verify of a dataset with a changed file exits 4" "$KFORGE" dataset fetch "$URL/tampered.tar.gz" -o dl4 --verify
	contains "... naming the file" "$T_TMP/err" "kforge.db: checksum mismatch"
	check "... and leaves no file at all" sh -c 'test -z "$(ls -A dl4)"'
	expect_exit 0 "without --verify the same tarball extracts" "$KFORGE" dataset fetch "$URL/tampered.tar.gz" -o dl5
	check "... as it is" test -s dl5/tampered/kforge.db
else
	skip "zstd missing: no tampered dataset"
fi
check "the extracted files pass sha256sum -c" sh -c 'cd dl/kforge-kernelbench-2.0.0 && sha256sum --quiet -c SHA256SUMS'
check "no temporary directory left" sh -c '! ls -A dl | grep -q "^\.kforge"'
expect_exit 0 "dataset verify accepts the extracted directory" "$KFORGE" dataset verify dl/kforge-kernelbench-2.0.0
cp -r dl/kforge-kernelbench-2.0.0 tampered && printf 'x' >>tampered/kforge.db && ln -s /etc/passwd tampered/link
expect_exit 4 "... and catches a changed file and a link in a directory" "$KFORGE" dataset verify tampered
contains "... the changed file" "$T_TMP/err" "kforge.db: checksum mismatch"
contains "... the link" "$T_TMP/err" "link is not a regular file"
cp "srv/$TZ" "srv/norange-$TZ"
mkdir nr && head -c 3000 "srv/$TZ" >"nr/norange-$TZ.part"
expect_exit 0 "a partial download from a server without Range support starts over" "$KFORGE" dataset fetch "$URL/norange-$TZ" --sha256 "$SUM" -o nr
lacks "... and does not claim a resume" "$T_TMP/out" "resumed"
check "... and the file is whole" cmp -s "srv/$TZ" "nr/norange-$TZ"
expect_exit 1 "fetching into an existing directory is refused" "$KFORGE" dataset fetch "$URL/$TZ" -o dl
expect_exit 1 "a wrong --sha256 fails" "$KFORGE" dataset fetch "$URL/$TZ" --sha256 "$(echo "$SUM" | tr 0-9a-f 1-9a-f0)" -o wrong
contains "... saying so" "$T_TMP/err" "SHA-256 mismatch"
check "... and extracts nothing" test ! -e wrong/kforge-kernelbench-2.0.0
expect_exit 1 "a download over --max-bytes is refused" "$KFORGE" dataset fetch "$URL/$TZ" -o small --max-bytes 1000
contains "... naming the limit" "$T_TMP/err" "over the limit of 1000 bytes"
expect_exit 1 "a 404 fails" "$KFORGE" dataset fetch "$URL/none.tar.zst" -o nf
expect_exit 1 "plain http to a non-loopback host is refused" "$KFORGE" dataset fetch "http://example.com/x.tar.zst" -o x
contains "... before any network use" "$T_TMP/err" "only https://"
# The scheme rule holds for every hop: a redirect to plain http on a host
# that is not loopback is refused before it is contacted (.invalid never
# resolves: without the check, the error would be a failed lookup).
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
expect_exit 1 "a redirect to plain http on another host is refused" "$KFORGE" dataset fetch "$URL/r/ok.tar.gz?to=$(enc http://example.invalid/ok.tar.gz)" -o rd1
contains "... by the scheme rule" "$T_TMP/err" "redirect refused: http://example.invalid/ok.tar.gz: only https://"
check "... and nothing is extracted" test ! -e rd1/ok
expect_exit 1 "a redirect to another scheme is refused" "$KFORGE" dataset fetch "$URL/r/ok.tar.gz?to=$(enc ftp://127.0.0.1/ok.tar.gz)" -o rd2
contains "... by the scheme rule" "$T_TMP/err" "redirect refused: ftp://127.0.0.1/ok.tar.gz"
expect_exit 0 "a redirect to plain http on a loopback host is followed" "$KFORGE" dataset fetch "$URL/r/ok.tar.gz?to=$(enc "$URL/ok.tar.gz")" -o rd3
check "... to the file, not the redirect's body" cmp -s srv/ok.tar.gz rd3/ok.tar.gz
# A resumed download behind a redirect resumes (libcurl would read the 302's
# body against the range asked for and give up on the partial file).
mkdir rd5 && head -c 3000 "srv/$TZ" >"rd5/$TZ.part"
expect_exit 0 "a resumed download behind a redirect" "$KFORGE" dataset fetch "$URL/r/$TZ?to=$(enc "$URL/$TZ")" --sha256 "$SUM" -o rd5
contains "... resumes" "$T_TMP/out" "\\(resumed\\)"
contains "... from the partial file's end" log "GET /$TZ bytes=3000-"
check "... byte-identical" cmp -s "srv/$TZ" "rd5/$TZ"
expect_exit 1 "a redirect loop ends" "$KFORGE" dataset fetch "$URL/r/ok.tar.gz?to=$(enc "$URL/r/ok.tar.gz?to=$(enc "$URL/r/ok.tar.gz?to=$(enc "$URL/r/ok.tar.gz?to=$(enc "$URL/r/ok.tar.gz?to=$(enc "$URL/r/ok.tar.gz?to=$(enc "$URL/ok.tar.gz")")")")")")" -o rd4
contains "... after 5 redirects" "$T_TMP/err" "more than 5 redirects"
expect_exit 1 "a URL without a tarball name is refused" "$KFORGE" dataset fetch "$URL/" -o x
expect_exit 0 "a plain tarball with subdirectories extracts" "$KFORGE" dataset fetch "$URL/ok.tar.gz" -o h
check "... with its directories" test -s h/ok/sub/dir/file.txt

SPARSEGNU=""
[ -s srv/sparsegnu.tar.gz ] && SPARSEGNU=sparsegnu
for t in dotdot dotdot2 absolute dirdotdot absdir symlink hardlink hardlink2 device fifo \
	bomb empties emptydirs sparse $SPARSEGNU longname; do
	[ "$(stat -c %s "srv/$t.tar.gz")" -gt 5000 ] && prime "$t.tar.gz" h
	expect_exit 1 "refuses a tarball with $t" "$KFORGE" dataset fetch "$URL/$t.tar.gz" -o "h"
	case $t in
	dot*|abs*|dirdot*) why="refused: unsafe path" ;;
	*link|hardlink2) why="refused: .* is a link" ;;
	bomb) why="refused: bomb.bin would take the extracted size over [0-9]+ bytes \(the bound for a tarball of [0-9]+ bytes: 200 times its size" ;;
	empt*) why="refused: more than [0-9]+ entries for a tarball of [0-9]+ bytes \(one per 16 bytes\)" ;;
	sparse*) why="refused: (sparse.bin|holes) is a sparse file" ;;
	longname) why="refused: an entry name of 1110 bytes \(the limit is 1024\)" ;;
	*) why="refused: .* is not a regular file" ;;
	esac
	contains "... saying why ($t)" "$T_TMP/err" "$why"
	check "... and leaves no directory for it ($t)" test ! -e "h/$t"
done
expect_exit 1 "refuses a tarball over --max-extract" "$KFORGE" dataset fetch "$URL/big.tar.gz" -o h --max-extract 1M
contains "... naming the bound" "$T_TMP/err" "refused: big.bin would take the extracted size over 1048576 bytes"
check "nothing escaped next to the target" sh -c 'test ! -e escaped && test ! -e h/escaped && test ! -e "$T_TMP/../escaped"'
check "nothing written at the absolute path" test ! -e /tmp/kforge-absolute-escape-test
check "no directory made at the absolute path" test ! -e /tmp/kforge-absolute-dir-test
check "no directory made above the target" sh -c 'test ! -e escaped-dir && test ! -e h/escaped-dir'
expect_exit 4 "dataset verify reads a bomb no further than the bound, a failed check" "$KFORGE" dataset verify srv/bomb.tar.gz
contains "... saying why" "$T_TMP/err" "refused: bomb.bin would take the extracted size over"
expect_exit 4 "dataset verify refuses a sparse file, a failed check" "$KFORGE" dataset verify srv/sparse.tar.gz
head -c 3000 srv/big.tar.gz >trunc.tar.gz
expect_exit 4 "dataset verify of a truncated archive: a failed check" "$KFORGE" dataset verify trunc.tar.gz
expect_exit 1 "dataset verify of no file exits 1" "$KFORGE" dataset verify srv/nothere.tar.gz
# One rule for entry names in verify and in extraction: "./data/x" is unsafe in both.
expect_exit 4 "dataset verify flags a ./ entry" "$KFORGE" dataset verify srv/dotslash.tar.gz
contains "... as unsafe" "$T_TMP/err" "unsafe entry name './data/x'"
expect_exit 1 "dataset fetch without --verify refuses it too" "$KFORGE" dataset fetch "$URL/dotslash.tar.gz" -o ds
contains "... as an unsafe path" "$T_TMP/err" "refused: unsafe path './data/x'"
check "... and extracts nothing" test ! -e ds/dotslash
check "no temporary directories left" sh -c '! ls -A h | grep -q "^\.kforge"'
check "the target holds only what was accepted" sh -c 'test "$(ls h | grep -v "\.tar\.gz$")" = ok'
