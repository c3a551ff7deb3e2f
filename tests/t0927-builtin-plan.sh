#!/bin/sh
# The built-in proposer leads with the template's best-known plan (issue 42,
# kernels/plans.c): in round 1 of a search the first idea is the plan's
# catalogue idea, its record says why, and its first implementation is the
# plan's parameters on the template's defaults (the kernel the lab measured);
# the other ideas and points are chosen as before, and round 2 builds on the
# fastest kernel without a plan. Every problem of levels 1-3 has a plan whose
# idea is a catalogue idea of its template and family, and which renders, on
# sm_90 (the default) and on a GPU without wgmma. A search with the real
# proposer and a fake engine. Level 3's second idea of round 1 is the plan's
# other tensor-core choice (convs on the wgmma core, or GEMMs on tf32+bf16),
# the fp64 tensor cores where flagged; two such renderings compile.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
E="$KF_BUILD/tests/builtin_emit"

# problem, the plan's idea and template (H100: docs/results/README.md)
cat >want.txt <<'EOF'
level2/001_Conv2D_ReLU_BiasAdd graph-tensor-core graph
level1/001_Square_matrix_multiplication mm-tce-wgmma matmul_tce
level1/050_conv_standard_2D__square_input__square_kernel conv-tce-wgmma conv_tce
level1/075_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated convt-phase-lanes convt_phase
level3/001_MLP graph-tensor-core graph
EOF
expect_exit 0 "a 2-round search of a level-2, a matmul, two conv and a level-3 problem" \
	"$SF" --db "$T_TMP/k.db" --root "$KF_ROOT" --problems level2/1,level1/1,level1/50,level1/75,level3/1 \
	--rounds 2 --k 3 --m 2 --proposer builtin
q() { sqlite3 "$T_TMP/k.db" "$1"; }
while read -r p idea tmpl; do
	n=${p%%_*}
	r=$(q "select response from llm_calls where problem_id='$p' and purpose='ideas' and round=1")
	printf '%s\n' "$r" >ideas.json
	check "$n round 1: the first idea is the plan's, $idea, and says why" python3 - ideas.json "$idea" "$tmpl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
first = r["ideas"][0]
assert first["id"] == sys.argv[2] and first["template"] == sys.argv[3] and first["plan"] is True, first
assert first["why"].startswith("the template's best-known plan: ") and len(first["why"]) > 40, first
assert r["plan"]["idea"] == sys.argv[2] and r["plan"]["template"] == sys.argv[3], r["plan"]
assert isinstance(r["plan"]["params"], dict) and r["plan"]["evidence"], r["plan"]
assert len(r["ideas"]) == 3 and not any(i.get("plan") for i in r["ideas"][1:]), r["ideas"]
PY
	check "$n round 1: the idea's text says so" sh -c \
		"sqlite3 '$T_TMP/k.db' \"select text from ideas where problem_id='$p' and round=1 and catalogue_id='$idea'\" | grep -q \"^Start from the template's best-known plan\""
	# the plan's own rendering, on the template's defaults
	spec="$KF_ROOT/problems/$p/spec.json"
	params=$("$E" plan "$spec" | head -n 1 | cut -d' ' -f3-)
	"$E" render "$spec" "$tmpl" "$params" >plan.cu
	q "select k.source from candidates c join ideas i on i.id=c.idea_id join kernels k on k.hash=c.kernel_hash
	   where c.problem_id='$p' and c.round=1 and i.catalogue_id='$idea' and c.impl_index=0" >first.cu
	check "$n round 1: the plan idea's first kernel is the plan's rendering" sh -c \
		"test -s plan.cu && sed '\$d' first.cu | cmp -s - plan.cu || { diff plan.cu first.cu | head -n 5 | sed 's/^/# /'; false; }"
	check "$n round 1: and its implement record says it is the plan's" sh -c \
		"test \"\$(sqlite3 '$T_TMP/k.db' \"select json_extract(response,'\$.plan.made') from llm_calls where problem_id='$p' and purpose='implement' and round=1 and json_extract(response,'\$.plan') is not null\")\" = 1"
	check "$n round 1: two kernels of the plan idea, three ideas" test \
		"$(q "select count(distinct c.idea_id) || ' ' || sum(i.catalogue_id='$idea') from candidates c join ideas i on i.id=c.idea_id where c.problem_id='$p' and c.round=1")" = "3 2"
	check "$n round 2: no plan" test \
		"$(q "select count(*) from llm_calls where problem_id='$p' and round=2 and json_extract(response,'\$.plan') is not null")" = 0
done <want.txt

# Every problem: a plan, its idea the catalogue's for its template and family, rendered.
: >bad.txt
for spec in "$KF_ROOT"/problems/level[123]/*/spec.json; do
	p=${spec#"$KF_ROOT"/problems/}
	p=${p%/spec.json}
	for arch in sm_80 ""; do
		"$E" plan "$spec" $arch >plan.out 2>plan.err ||
			echo "$p ${arch:-sm_90}: $(head -n 1 plan.err)" >>bad.txt
	done
	echo "$p $(head -n 1 plan.out)" >>plans.txt
done
check "all 250 problems have a plan that renders, on sm_90 and sm_80 ($(wc -l <bad.txt) failed)" \
	test "$(wc -l <plans.txt)" -eq 250 -a ! -s bad.txt
head -n 5 bad.txt | sed 's/^/# /'
contains "a level-2 problem's plan is the tensor-core graph" plans.txt \
	'^level2/002_[^ ]* graph-tensor-core graph \{"fuse": 1, "tc": 1\}$'
contains "a depthwise conv's is conv_dw's" plans.txt '^level1/082_[^ ]* conv-smem-halo conv_dw '
contains "a 3-D strided transposed conv's is conv_tce's" plans.txt '^level1/077_[^ ]* conv-tce-wgmma conv_tce '
"$E" plan "$KF_ROOT/problems/level1/001_Square_matrix_multiplication/spec.json" sm_80 >p80.txt
contains "without wgmma, matmul_tce's plan takes the mma core" p80.txt '^mm-tce-mma matmul_tce \{"core": "mma"'

# The search gives the proposer its GPU's target (the backend's arch): on a
# GPU without wgmma round 1 leads with the mma.sync twins; on an H100 (sm_90a)
# with the wgmma plans.
for a in sm_80 sm_90a; do
	expect_exit 0 "a 1-round search on a fake $a GPU" "$SF" --db "$T_TMP/a$a.db" --root "$KF_ROOT" \
		--problems level1/1,level2/1 --rounds 1 --k 2 --m 1 --proposer builtin --gpu-arch "$a"
	sqlite3 "$T_TMP/a$a.db" "select problem_id, json_extract(response, '\$.plan.idea'),
	  json_extract(response, '\$.plan.params') from llm_calls where purpose='ideas' and round=1
	  order by problem_id" >"plan-$a.txt"
done
contains "sm_80: the matmul's plan is the mma core" plan-sm_80.txt '^level1/001_[^|]*\|mm-tce-mma\|\{"core":"mma"'
contains "sm_80: the graph's plan adds mma" plan-sm_80.txt '^level2/001_[^|]*\|graph-tensor-core\|\{"fuse":1,"mma":1,"tc":1\}$'
contains "sm_90a: the matmul's plan is wgmma" plan-sm_90a.txt '^level1/001_[^|]*\|mm-tce-wgmma\|\{"core":"wgmma"'
contains "sm_90a: the graph's plan is the wgmma one" plan-sm_90a.txt '^level2/001_[^|]*\|graph-tensor-core\|\{"fuse":1,"tc":1\}$'

# Level 3: round 1's second idea is the plan's other tensor-core choice where
# fp32 can pass (requires conv_model, gemm_model): a model with convs runs
# them on the wgmma core (channels-last copies, the xform kernels), one
# without on the tf32+bf16 split; flagged models get the fp64 tensor cores,
# level 2 neither. Their first points render, differently from the plan.
second() { "$E" ideas "$(ls "$KF_ROOT"/problems/$1_*/spec.json)" 2 1 | sed -n 2p; }
for n in 005 011 015 018; do
	check "level3/$n (convs): graph-tensor-core-wgmma-conv second" test "$(second level3/$n)" = graph-tensor-core-wgmma-conv
done
for n in 001 028 036 044; do
	check "level3/$n (no conv): graph-tensor-core-tf32bf16 second" test "$(second level3/$n)" = graph-tensor-core-tf32bf16
done
check "level3/045 (flagged): the fp64 tensor cores second" test "$(second level3/045)" = graph-fp64-tensor-core
"$E" ideas "$(ls "$KF_ROOT"/problems/level2/001_*/spec.json)" 1000 1 >ideas-l2.txt
lacks "level 2 is offered neither" ideas-l2.txt '^graph-tensor-core-(wgmma-conv|tf32bf16)$'
"$E" ideas "$(ls "$KF_ROOT"/problems/level3/010_*/spec.json)" 1000 1 >ideas-10.txt
lacks "nor a flagged model" ideas-10.txt '^graph-tensor-core-(wgmma-conv|tf32bf16)$'
s5=$(ls "$KF_ROOT"/problems/level3/005_*/spec.json)
"$E" render "$s5" graph "$("$E" plan "$s5" | head -n 1 | cut -d' ' -f3-)" >p5.cu
"$E" render "$s5" graph '{"fuse": 1, "tc": 1, "conv_mma": 0, "conv_wg": 2}' >i5.cu
check "005: the plan's convs on mma.sync, the idea's on wgmma (xform kernels)" \
	test "$(grep -c 'void g[0-9]*_conv_tc_xform' p5.cu)" -eq 0 -a "$(grep -c 'void g[0-9]*_conv_tc_xform' i5.cu)" -gt 0
s1=$(ls "$KF_ROOT"/problems/level3/001_*/spec.json)
"$E" render "$s1" graph "$("$E" plan "$s1" | head -n 1 | cut -d' ' -f3-)" >p1.cu
"$E" render "$s1" graph '{"fuse": 1, "tc": 1, "split3": 0, "mma": 0}' >i1.cu
check "001: the plan's GEMMs 3xTF32, the idea's tf32+bf16" sh -c \
	'grep -q "core, 3xTF32 split" p1.cu && ! grep -q "core, tf32+bf16 split" p1.cu &&
	 grep -q "core, tf32+bf16 split" i1.cu && ! grep -q "core, 3xTF32 split" i1.cu'
if have_nvrtc; then
	mkdir -p fx2 cu2
	for f in 005:i5 001:i1; do
		b=$(basename "$(dirname "$(ls "$KF_ROOT"/problems/level3/${f%%:*}_*/spec.json)")")
		ln -sf "$KF_ROOT/problems/level3/$b/spec.json" "fx2/$b.json"
		{ echo "// problem: $b"; cat "${f#*:}.cu"; } >"cu2/$b.cu"
	done
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --fixtures fx2 --launch-only cu2/*.cu >lo2.txt 2>&1
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --timeout 120 --fixtures fx2 cu2/*.cu >cc2.txt 2>&1
	check "both pass the engine's launch check and NVRTC compiles them (sm_90a)" \
		test "$(grep -c ': launch_ok$' lo2.txt)" -eq 2 -a "$(grep -c ': ok ' cc2.txt)" -eq 2
	grep -v ': ok ' cc2.txt | head -n 3 | cut -c1-300 | sed 's/^/# /'
else
	skip "NVRTC missing: the two renderings are not compiled"
fi
