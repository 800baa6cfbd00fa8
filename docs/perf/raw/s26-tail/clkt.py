import re,sys,gzip,statistics as st,collections
f=sys.argv[1]
op=gzip.open if f.endswith('.gz') else open
shape='?'; recs=collections.defaultdict(list); cur={}
pat=re.compile(r'CLKT b(\d+) N(\d+) pdl(\d+) nc(\d+) w(\d+): first (-?\d+) full (-?\d+) loop (-?\d+) acc (-?\d+) hand (-?\d+) end (-?\d+) \| w(\d+): first (-?\d+) full (-?\d+) loop (-?\d+) acc (-?\d+) hand (-?\d+) end (-?\d+)')
for line in op(f,'rt'):
    m=re.match(r'# fixed cost: A (\S+)',line)
    if m: shape=m.group(1); continue
    m=pat.search(line)
    if not m: continue
    g=list(map(int,m.groups()))
    b,N,pdl,nc=g[:4]
    for w,vals in ((g[4],g[5:11]),(g[11],g[12:18])):
        cur.setdefault((shape,N,pdl,b),{})[w]=(vals,nc)
    k=(shape,N,pdl,b)
    if len(cur[k])==8:
        ws=cur.pop(k)
        if all(abs(ws[w][0][j]) < 10**6 for w in range(8) for j in range(6)) and all(ws[w][0][2] > 0 for w in range(8)):
            recs[(shape,N,pdl)].append((b,ws))
for key in sorted(recs):
    rows=recs[key]
    print(f"== {key[0]} N={key[1]} pdl={key[2]}: {len(rows)} CTA records")
    agg=collections.defaultdict(list)
    for b,ws in rows:
        fulls=[ws[w][0][1] for w in range(8)]; loops=[ws[w][0][2] for w in range(8)]
        accs=[ws[w][0][3] for w in range(8)]; hands=[ws[w][0][4] for w in range(8)]; ends=[ws[w][0][5] for w in range(8)]
        firsts=[ws[w][0][0] for w in range(8)]
        agg['last-slot span (full - first, w0)'].append(fulls[0]-firsts[0])
        agg['skew of last full (max-min)'].append(max(fulls)-min(fulls))
        agg['full->loop (max)'].append(max(l-f for l,f in zip(loops,fulls)))
        agg['loop->acc (max)'].append(max(a-l for a,l in zip(accs,loops)))
        agg['max acc - min acc'].append(max(accs)-min(accs))
        agg['max acc -> hand (w0)'].append(hands[0]-max(accs))
        agg['hand->end w0'].append(ends[0]-hands[0])
        agg['end spread'].append(max(ends)-min(ends))
        agg['total: min full -> max end'].append(max(ends)-min(fulls))
        agg['nc'].append(ws[0][1])
    for k,v in agg.items():
        v=sorted(v); print(f"   {k:34s} med {st.median(v):8.0f}  min {v[0]:7d}  max {v[-1]:7d}")
