"""The rows of this folder, one machine at a time and pooled over both, from the printed rounds (ms per unit):
    python tests/benchmarks/records/fidelity_h200_2026-11-28f/pool.py"""
import re, statistics, sys
from runner.fidelity import summarise
R="tests/benchmarks/records/fidelity_h200_2026-11-28f/"
def rows(path):
    """Each row's printed rounds (ms), the partial last row too."""
    out={}; cur=[]
    for line in open(path):
        m=re.search(r'seed \(plain ([\d.]+)\), benchsite ([\d.]+) ms',line)
        if m: cur.append((float(m[1]),float(m[2]))); continue
        m=re.match(r'(\d{3}) (\S+(?: depth=\d+)?)',line)
        if m and 'ratio' in line:
            out[m[1]+' '+m[2]]=cur; cur=[]
    if cur: out['partial']=cur
    return out
def show(tag, name, rs):
    s=[a for a,_ in rs]; h=[b for _,b in rs]
    if len(rs)<2: print(tag,name,len(rs)); return
    x=summarise(h,s)
    print(f"| {tag} | {name} | {len(rs)} | {statistics.geometric_mean(s):,.3f} | {statistics.geometric_mean(h):,.3f} | {x.ratio:.3f} ({x.ci95[0]:.3f} .. {x.ci95[1]:.3f}) | {x.verdict} |")
A=rows(R+'machine_a/cpu_a.txt'); B=rows(R+'machine_b/cpu_a.txt'); G=rows(R+'machine_b/gpu_a.txt')
for tag,d in (('A cpu',A),('B cpu',B),('B gpu',G)):
    for k,v in d.items(): show(tag,k,v)
for k in B:
    if k in A: show('A+B cpu',k,A[k]+B[k])
show('A+B cpu','002 (A partial)',A['partial']+B['002 cifar-lenet'])
