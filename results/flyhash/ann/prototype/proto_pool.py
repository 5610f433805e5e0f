import numpy as np, gzip, sys, time
def idx(p):
    b=gzip.open(p).read(); n=int.from_bytes(b[4:8],'big'); return np.frombuffer(b,np.uint8,offset=16).reshape(n,784).astype(np.float32)
D='/usr/share/datasets/fashion-mnist/'
X=idx(D+'train-images-idx3-ubyte.gz'); Q=idx(D+'t10k-images-idx3-ubyte.gz')[:300]
d2=(Q**2).sum(1)[:,None]-2*Q@X.T+(X**2).sum(1)[None]
true=np.argsort(d2,1)[:,:10]
rng=np.random.default_rng(1)
s=39
def run(B,w,L,center,Ts):
    rows=B*w*L
    P=np.stack([rng.choice(784,s,replace=False) for _ in range(rows)])
    def pooled(Z):
        A=Z[:,P].sum(2)  # n x rows
        if center: A=A-A.mean(1,keepdims=True)
        return A.reshape(len(Z),L,B,w).sum(3)  # n,L,B
    PX=pooled(X); thr=np.median(PX,0)  # L,B
    keysX=((PX>thr)*(1<<np.arange(B))).sum(2)  # n,L
    PQ=pooled(Q); mq=PQ-thr
    keysQ=((mq>0)*(1<<np.arange(B))).sum(2)
    allb=np.arange(1<<B)
    bits=((allb[:,None]>>np.arange(B))&1)
    res={T:[0,0] for T in Ts}
    tabs=[]
    for l in range(L):
        order=np.argsort(keysX[:,l],kind='stable'); ks=keysX[order,l]
        starts=np.searchsorted(ks,allb); ends=np.searchsorted(ks,allb,side='right')
        tabs.append((order,starts,ends))
    for q in range(len(Q)):
        cand={T:set() for T in Ts}
        for l in range(L):
            diff=bits^(((keysQ[q,l]>>np.arange(B))&1)[None])
            score=(diff*(mq[q,l]**2)[None]).sum(1)
            ob=np.argsort(score,kind='stable')
            order,st,en=tabs[l]
            for T in Ts:
                for b in ob[:T]:
                    cand[T].update(order[st[b]:en[b]].tolist())
        for T in Ts:
            c=cand[T]; res[T][0]+=len(c); res[T][1]+=sum(1 for t in true[q] if t in c)
    for T in Ts:
        print(f"B={B} w={w} L={L} center={center} T={T}: cand={res[T][0]/len(Q):.0f} ({res[T][0]/len(Q)/600:.2f}%) recall={res[T][1]/len(Q)/10:.3f}",flush=True)
for args in [(12,8,1,False),(12,8,1,True)]:
    t=time.time(); run(*args,[1,4,16,64,256]); print(time.time()-t)
