#!/bin/bash
# The exact index searched by one process and by two (mpirun -np 2, and started by hand), on this
# machine's CPU, 5 runs each; prints one JSON object. Run from the repository root after
#   cargo build --release --bin neurobits
# with the index and queries made as in the manual's "Several processes and hosts" (Fashion-MNIST
# training set, 25 088 bits, 1 254 winners; the first 100 test images as q100.npy) in $DIR.
set -euo pipefail
NB=${NB:-$PWD/target/release/neurobits}
DIR=${DIR:-/tmp/mpibench}
cd "$DIR"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
S="flyhash index search --index fm.nbi -i q100.npy -k 100"
t() { local s=$(date +%s.%N); "$@" >/dev/null; awk -v a="$s" -v b="$(date +%s.%N)" "BEGIN { printf \"%.3f\\n\", b - a }"; }
run() { for i in 1 2 3 4 5; do t "$@"; done | sort -n | sed -n 3p; }  # the median of 5
one2=$(run $NB $S --threads 2 -o one.csv)
one1=$(run $NB $S --threads 1 -o one1.csv)
mpi2=$(run mpirun -np 2 --oversubscribe $NB $S --distributed --threads 1 -o mpi.csv)
hand() { RANK=1 WORLD_SIZE=2 $NB $S --distributed --threads 1 -o hand.csv & RANK=0 WORLD_SIZE=2 $NB $S --distributed --threads 1 -o hand.csv; wait; }
hand2=$(run hand)
cmp one.csv one1.csv && cmp one.csv mpi.csv && cmp one.csv hand.csv
echo "{\"machine\": \"$(nproc)-core $(uname -m), no GPU, shared\", \"index\": \"60000 codes x 25088 bits (188 MB)\", \"queries\": 100, \"k\": 100,"
echo " \"seconds_median_of_5\": {\"one_process_2_threads\": $one2, \"one_process_1_thread\": $one1, \"mpirun_np2_1_thread_each\": $mpi2, \"by_hand_2_ranks_1_thread_each\": $hand2},"
echo " \"outputs_identical\": true, \"mpirun\": \"$(mpirun --version | head -1)\"}"
