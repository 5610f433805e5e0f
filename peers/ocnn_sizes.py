"""OCNN with its defaults against HDBSCAN with its defaults on small and large synthetic sets
(100 to 1 000 points, seeds 20-24, never used to choose anything; the third round's link rule
was chosen on seeds 0-9 of the same generators, results/ocnn/small-sets.md), standardised as in
clustering_quality.py. Usage: python3 peers/ocnn_sizes.py [BINARY [ocnn cluster options...]]."""
import os, sys, numpy as np, warnings
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clustering_quality import ocnn
from sklearn import datasets, cluster, preprocessing
from sklearn.metrics import adjusted_rand_score as ari
B=sys.argv[1] if len(sys.argv) > 1 else 'target/release/neurobits'
def make(f, n, s):
    if f=='circles': return datasets.make_circles(n, factor=0.5, noise=0.05, random_state=s)
    if f=='moons': return datasets.make_moons(n, noise=0.05, random_state=s)
    if f=='varied': return datasets.make_blobs(n, cluster_std=[1.0,2.5,0.5], random_state=s+170)
    if f=='blobs': return datasets.make_blobs(n, random_state=s)
    if f=='aniso':
        X,y=datasets.make_blobs(n, random_state=s+170); return X@np.array([[0.6,-0.6],[-0.4,0.8]]), y
def main():
    extra=sys.argv[2:]
    for f in ['circles','moons','varied','aniso','blobs']:
        for n in [100,200,300,1000]:
            o=[];h=[]
            for s in range(20,25):
                X,y=make(f,n,s); X=preprocessing.StandardScaler().fit_transform(X)
                o.append(ari(y, ocnn(B,X,1,extra)))
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore'); h.append(ari(y, cluster.HDBSCAN().fit_predict(X)))
            print(f"{f:8s} n={n:5d} OCNN {np.mean(o):.3f} (min {min(o):.2f})  HDBSCAN {np.mean(h):.3f} (min {min(h):.2f})", flush=True)


if __name__ == "__main__":
    main()
