import json,math,sys,collections
lvl=sys.argv[1]; gpu=sys.argv[2]; files=sys.argv[3:]
b=json.load(open('problems/baselines/%s/baseline_time_torch.json'%gpu))['level'+lvl]
bn={}
try: bn=json.load(open('problems/baselines/%s/baseline_time_torch_notf32.json'%gpu))['level'+lvl]
except Exception: pass
def base(p,d):
    num=int(p[:3])
    for k,v in d.items():
        if k.split('_')[0]==str(num): return v['mean']
    return None
res=collections.defaultdict(dict)
for f in files:
    for l in open(f):
        r=json.loads(l)
        tag=r['file'].rsplit('-',1)[1][:-3]
        p=r['problem'].split('/')[1]
        res[tag][p]=r
for tag,d in sorted(res.items()):
    ok=[p for p,r in d.items() if r['status']=='correct']
    sp=[base(p,b)/d[p]['time_mean_ms'] for p in ok if base(p,b)]
    spn=[base(p,bn)/d[p]['time_mean_ms'] for p in ok if base(p,bn)]
    g=math.exp(sum(map(math.log,sp))/len(sp)) if sp else 0
    gn=math.exp(sum(map(math.log,spn))/len(spn)) if spn else 0
    print("%s: %d results, %d correct, geomean %.3fx eager (%d), %.3fx notf32, fast_1 %d"%(tag,len(d),len(ok),g,len(sp),gn,sum(s>1 for s in sp)))
    bad=[(p,d[p]['status'],d[p].get('detail','')[:100]) for p in d if d[p]['status']!='correct']
    for x in bad: print('   ',x)
