#!/bin/sh
# The built-in graph template (kernels/graph/builtin_graph*.c) on all 100
# level-2 problems: the catalogue's graph ideas apply and render; fused
# (fuse=1) and per-node (fuse=0) kernels at full size pass the launch-plan
# check and compile with NVRTC for sm_90a (kfcompile: its results kept
# across runs); at
# small sizes (gen.py --small) both, emulated on the host, match the
# Python graph evaluator and the CPU oracle at the fp32 tolerance, also
# with every reduction in the thread-per-output and split shapes (red=1),
# and on the tensor-core emitters with 8 and 16 channels (tc=1);
# mutated kernels fail that comparison. The problems whose linear folds are
# those whose spec lowers the speed-of-light floor (floor_flops).
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"

need_emulator

EMIT="$KF_BUILD/tests/builtin_emit"
# ideas: the four graph ideas apply to every problem, and every one renders
: >ideas.bad
mkdir -p all
for d in "$KF_ROOT"/problems/level2/*/; do
	b=$(basename "$d")
	"$EMIT" ideas "$d/spec.json" 20 1 >ideas.out 2>&1 || echo "$b: ideas failed" >>ideas.bad
	test "$(grep -c '^graph-' ideas.out)" -eq 4 || echo "$b: $(tr '\n' ' ' <ideas.out)" >>ideas.bad
	"$EMIT" all "$d/spec.json" all 1 1 >all.out 2>&1 || echo "$b: all: $(tail -n 1 all.out)" >>ideas.bad
done
check "the graph ideas apply to all 100 problems and render" test ! -s ideas.bad
head -n 5 ideas.bad | sed 's/^/# /'
check "400 idea kernels rendered" test "$(ls all | grep -c '\.cu$')" -eq 400

# bounds: parameters and specs from outside are refused, naming the template
spec12=$(ls "$KF_ROOT"/problems/level2/012_*/spec.json)
for bad in '{"block": -1}' '{"block": 1000000}' '{"BM": -1}' '{"BM": 1000000, "TM": 1}' '{"TM": 0}'; do
	expect_exit 1 "graph refuses $bad" "$EMIT" render "$spec12" graph "$bad"
	contains "naming itself" "$T_TMP/err" "^graph: "
done
expect_exit 1 "graph does not apply to a level-1 problem" "$EMIT" render \
	"$(ls "$KF_ROOT"/problems/level1/019_*/spec.json)" graph
contains "saying so" "$T_TMP/err" "does not apply"
mkdir -p badspec
python3 -c "
import copy, json, sys
s = json.load(open(sys.argv[1]))
g = s['attrs']['graph']
def put(name, f):
    t = copy.deepcopy(s)
    f(t)
    json.dump(t, open('badspec/%s.json' % name, 'w'))
put('permute', lambda t: t['attrs']['graph'][1].update(op='permute', perm=[1, 0]))
put('long', lambda t: t['attrs']['graph'].__setitem__(slice(1, 2), [dict(g[1], out='t1')] +
    [dict(g[1], out='u%d' % k, **{'in': ['t1' if k == 0 else 'u%d' % (k - 1)]}) for k in range(4100)]))
put('hugedim', lambda t: t['attrs']['graph'][0].update(shape=[1024, 1 << 40]))
put('wrongweight', lambda t: t['attrs']['graph'][0].update(shape=[1024, 4096]))
put('unknownin', lambda t: t['attrs']['graph'][1].update(**{'in': ['nosuch']}))
" "$spec12"
for b in permute long hugedim unknownin; do
	expect_exit 1 "graph does not apply to a graph with a bad node ($b)" "$EMIT" render \
		"badspec/$b.json" graph
done
expect_exit 1 "nor to a linear whose weight does not match its output" "$EMIT" render \
	badspec/wrongweight.json graph

# full size: NVRTC and the launch plan, fused and per node
mkdir -p full cc fx
set --
for d in "$KF_ROOT"/problems/level2/*/; do
	ln -s "$d/spec.json" "fx/$(basename "$d").json"
done
h=0
for d in "$KF_ROOT"/problems/level2/*/; do
	b=$(basename "$d")
	h=$((h + 1))
	for f in 1 0; do
		"$EMIT" render "$d/spec.json" graph "{\"fuse\": $f}" >"full/$b-$f.cu" 2>>render.err
		# NVRTC: the fused kernels of every eighth problem, the per-node ones of
		# every sixteenth (make test-long: every fused one, every other per-node)
		[ "$f" = 1 ] && ! every_nth "$h" 8 1 && continue
		[ "$f" = 0 ] && ! every_nth $((h + 1)) 16 2 && continue
		{ echo "// problem: $b"; cat "full/$b-$f.cu"; } >"cc/$b-$f.cu"
		set -- "$@" "cc/$b-$f.cu"
	done
done
check "200 full-size kernels rendered" test ! -s render.err
# and with the tensor-core emitters where a linear or conv leads: wgmma for
# every sixth problem, the mma.sync GEMM for every 24th (make test-long: all,
# every third; NVRTC time; t0921 and t0922 compile the mma.sync cores at full
# size)
ntc=0 k=0
for d in "$KF_ROOT"/problems/level2/*/; do
	b=$(basename "$d")
	k=$((k + 1))
	for m in 0 1; do
		"$EMIT" render "$d/spec.json" graph "{\"tc\": 1, \"mma\": $m}" >"full/$b-tc$m.cu" 2>>render.err
		ntc=$((ntc + 1))
		if [ "$m" = 0 ]; then every_nth $((k + 1)) 6 1 || continue
		else every_nth "$k" 24 3 || continue; fi
		{ echo "// problem: $b"; cat "full/$b-tc$m.cu"; } >"cc/$b-tc$m.cu"
		set -- "$@" "cc/$b-tc$m.cu"
	done
done
check "$ntc tensor-core kernels rendered" test ! -s render.err -a "$ntc" -eq 200
# the conv emitters' epilogue reads per-channel operands (the bias, a
# (C, 1, 1) tensor) at the store's channel c, not ei / S % C
check "tensor-core conv epilogues index per-channel operands by c (1, 21)" sh -c \
	"grep -q 'v = v + ep0\[c\];' full/001_*-tc0.cu && grep -q 'const float xb = ep2\[c\];' full/021_*-tc0.cu &&
	 ! grep -q 'ep[0-9]*\[(ei / [0-9]*LL) % [0-9]*LL\]' full/001_*-tc0.cu full/021_*-tc0.cu"
check "the GEMM of 12 and the conv of 1 take the emitters" sh -c \
	"grep -q 'wgmma' full/012_*-tc0.cu && grep -q 'mma.sync' full/012_*-tc1.cu && grep -q 'conv_tc' full/001_*-tc0.cu"
ncc=$#
long_tier && want_cc=283 || want_cc=38
check "$ncc kernels go to NVRTC" test "$ncc" -eq "$want_cc"
# NVRTC on one core: the emulation below goes on meanwhile
("$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --fixtures fx --timeout 120 --cpu 120 "$@" >cc.txt 2>&1
 echo $? >cc.rc) &
cc_pid=$!
# small sizes: emulated against the evaluator and the oracle
expect_exit 0 "gen.py --small writes the small tree" python3 "$KF_ROOT/problems/gen/level2/gen.py" --small small
# (make test: the per-node kernels of every third problem; make test-long: all)
pn="" k=0
for d in small/problems/level2/*/; do
	k=$((k + 1))
	every_nth "$k" 3 1 && pn="$pn $(basename "$d" | cut -c1-3)"
done
npn=$(echo $pn | wc -w)
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu -j "$(par_jobs)" \
	--params '{"fuse": 1}' >emu.out 2>&1
check "check_graph exits 0" test $? -eq 0
contains "the fused kernels of all 100 match" emu.out "^checked 100 kernels, 0 failed$"
grep '^not ok' emu.out | head -n 5 | sed 's/^/# /'
# shellcheck disable=SC2086
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu0 -j "$(par_jobs)" \
	--params '{"fuse": 0, "skinny": 0}' $pn >emu0.out 2>&1
contains "and the per-node kernels of $npn" emu0.out "^checked $npn kernels, 0 failed$"
grep '^not ok' emu0.out | head -n 5 | sed 's/^/# /'
# other SGEMM tiles on the linear problems
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu -j "$(par_jobs)" \
	--params '{"tc": 0, "skinny": 0, "BM": 128, "BN": 128, "TM": 8, "TN": 8, "block": 128}' 12 45 84 >tiles.out 2>&1
contains "128x128 tiles match too" tiles.out "^checked 3 kernels, 0 failed$"
# reductions (builtin_graph_red.c): a thread per output and split norm
# statistics wherever they apply (red=1), emulated the same way (make test:
# every problem with a reduction a thread per row or in parts, every third of
# the others; make test-long: all 100)
rn="" k=0
for d in small/problems/level2/*/; do
	k=$((k + 1))
	"$EMIT" render "$d/spec.json" graph '{"fuse": 1, "red": 1}' >red.cu 2>/dev/null
	if long_tier || every_nth "$k" 3 1 || grep -q 'one thread per row\|_part(' red.cu; then
		rn="$rn $(basename "$d" | cut -c1-3)"
	fi
done
nrn=$(echo $rn | wc -w)
# shellcheck disable=SC2086
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emured -j "$(par_jobs)" \
	--params '{"fuse": 1, "red": 1}' $rn >red.out 2>&1
contains "red=1: the $nrn match" red.out "^checked $nrn kernels, 0 failed$"
grep '^not ok' red.out | head -n 5 | sed 's/^/# /'
long_tier && want="20 4 15 5" || want="8 4 6 5"
check "red=1 took the other shapes (thread per output and per row, split statistics)" sh -c \
	'set -- $0 &&
	 test "$(grep -l "one thread per output" emured/*.cpp | wc -l)" -ge $1 &&
	 test "$(grep -l "one thread per row" emured/*.cpp | wc -l)" -ge $2 &&
	 test "$(grep -l "_norm_sums" emured/*.cpp | wc -l)" -ge $3 &&
	 test "$(grep -l "_part(" emured/*.cpp | wc -l)" -ge $4' "$want"
# and the comparison can fail: chunk sums read at a wrong index (part[o + k]
# for part[o * P + k]: only channel 0 right), variances about the sum, a
# thread's reduction or a softmax's sum over every other value
for m in 073:'t += part[o * :t += part[o + ' 052:'q += (a - mean) * (a - mean):q += (a - t) * (a - t)' \
	 024:'r++) {:r += 2) {' 023:'const double a = part[o * :const double a = part[o + ' 006:'j++)
        s += exp:j += 2)
        s += exp'; do
	num=${m%%:*} rest=${m#*:}
	python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emumut --params '{"red": 1}' \
		--sed "${rest%%:*}" "${rest#*:}" "$num" >redmut.out 2>&1
	check "a reduction mutated in $num fails" test $? -eq 1
	contains "and is named" redmut.out "^not ok ${num}_.*python: [1-9][0-9]* bad"
done
# tensor cores at small sizes: with 8 input and 16 output channels (the
# conv emitters take 8 or more output channels a group) the GEMMs and convs
# run on the wgmma cores, emulated (tests/tools/emulate_shim_tc.h) with
# their epilogues; every fourth problem (make test-long: all)
expect_exit 0 "gen.py --small-channels 8,16 writes the small tree" python3 \
	"$KF_ROOT/problems/gen/level2/gen.py" --small smallc --small-channels 8,16
tcnums="" k=0
for d in smallc/problems/level2/*/; do
	k=$((k + 1))
	every_nth $((k + 3)) 4 1 && tcnums="$tcnums $(basename "$d" | cut -c1-3)"
done
nsc=$(echo $tcnums | wc -w)
# shellcheck disable=SC2086
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" smallc emutc -j "$(par_jobs)" \
	--params '{"fuse": 1, "tc": 1, "skinny": 0}' $tcnums >tc.out 2>&1
contains "tc=1: the $nsc kernels match" tc.out "^checked $nsc kernels, 0 failed$"
grep '^not ok' tc.out | head -n 5 | sed 's/^/# /'
check "they run on the wgmma cores (GEMM and conv; 1 and 9 among them)" sh -c \
	"test \$(grep -l 'kfg_wgmma_tf32(' emutc/*.cpp | wc -l) -ge $((nsc * 9 / 10)) &&
	 grep -q 'g0_conv_tc' emutc/001_*.cpp && grep -q 'kfg_wgmma_tf32(' emutc/009_*.cpp &&
	 grep -q 'g0_conv_tc' emutc/005_*.cpp"
# the comparison can fail: the conv epilogue's bias read at channel 0
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" smallc emutcmut --params '{"fuse": 1, "tc": 1, "skinny": 0}' \
	--sed 'v = v + ep0[c];' 'v = v + ep0[0];' 1 >tcmut.out 2>&1
check "a conv epilogue reading the wrong bias fails" test $? -eq 1
contains "and is named" tcmut.out "^not ok 001_.*python: [1-9][0-9]* bad"
# full size, by size (red=-1): 072's batch norm of 16 statistics over 2^24
# values splits, 024's min over depth takes a thread per output
check "at full size the batch norm of 072 splits and 024's min is a thread's" sh -c \
	"grep -q 'g1_norm_sums<<<1024, 256>>>' full/072_*-1.cu && grep -q 'min over 22 values, one thread per output' full/024_*-1.cu"

# the problems whose linear the template folds into a matrix-vector product,
# or whose conv's spatial sum it folds (builtin_graph_csum.c), are those whose
# spec lowers the speed-of-light floor (floor_flops): else the engine rejects
# the fold as too fast to have done the work
check "the template folds exactly the problems with floor_flops" python3 -c "
import glob, json, os, sys
folded = {os.path.basename(f)[:3] for f in glob.glob('full/*-1.cu')
          if '_lsum_dot' in open(f).read() or '_csum_dot' in open(f).read()}
floor = {os.path.basename(os.path.dirname(f))[:3] for f in glob.glob(sys.argv[1] + '/problems/level2/*/spec.json')
         if 'floor_flops' in json.load(open(f))}
print('# folded', sorted(folded), 'floor_flops', sorted(floor))
sys.exit(0 if folded == floor and len(folded) >= 5 else 1)" "$KF_ROOT"

# the comparison can fail: a wrong negative_slope in 12's epilogue
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu \
	--sed "1.000000000e-01f" "1.100000000e-01f" 12 >mut.out 2>&1
check "a mutated kernel fails" test $? -eq 1
contains "and is named" mut.out "^not ok 012_Gemm_Multiply_LeakyReLU .*python: [1-9][0-9]* bad"

wait "$cc_pid"
check "kfcompile ran" test "$(cat cc.rc)" -eq 0
check "every kernel passes the launch-plan check and compiles" test "$(grep -c '\.cu: ok ' cc.txt)" -eq "$ncc"
grep '\.cu: ' cc.txt | grep -v '\.cu: ok ' | head -n 5 | cut -c1-300 | sed 's/^/# /'
check "the fused kernel of 12 folds bias, scale and LeakyReLU into the GEMM" \
	test "$(grep -c '<<<' "full/$(basename "$KF_ROOT"/problems/level2/012_*)-1.cu")" -eq 1

check "fusion: no fused kernel launches more than its per-node one, and 30 fewer in all" python3 -c "
import glob, sys
n = lambda f: open(f).read().count('<<<')
pairs = [(n(f), n(f[:-5] + '-0.cu')) for f in sorted(glob.glob('full/*-1.cu'))]
worse = [p for p in pairs if p[0] > p[1]]
fused, plain = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
print('#', fused, 'fused launches,', plain, 'per node')
sys.exit(1 if worse or len(pairs) != 100 or fused > plain - 30 else 0)"
