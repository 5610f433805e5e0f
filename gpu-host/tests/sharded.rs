//! W sharded over several GPUs (NCCL) and W replicated on them ≡ one GPU ≡ the CPU, bit for bit
//! (`make gpu-test`). The multi-GPU part runs where at least 2 GPUs exist and says so where not.

use neurobits_core::gbnn::batch::{retrieve_batch, retrieve_batch_decoded};
use neurobits_core::gbnn::decode::Decoded;
use neurobits_core::gbnn::shard::Shard;
use neurobits_core::gbnn::workload::{message, ProbePlan};
use neurobits_core::gbnn::{Network, Params, Rule, Stats};
use neurobits_gpu_host::gbnn::{ReplicatedNetwork, ShardedNetwork};
use neurobits_gpu_host::{Gpu, Pinned};

/// (C, L, stored, probes per erased count)
const CONFIGS: [(usize, usize, u64, u64); 5] = [
    (8, 128, 5_000, 800),
    (16, 512, 50_000, 400),
    (6, 100, 2_000, 600),
    (12, 200, 8_000, 400),
    (3, 5_000, 20_000, 600),
];

#[test]
#[ignore = "needs a CUDA GPU"]
fn sharded_retrieval_equals_the_cpu() {
    let count = Gpu::count();
    assert!(count >= 1, "a CUDA GPU");
    if count < 2 {
        println!("only {count} GPU here: the multi-GPU part is skipped; 1 shard checked");
    }
    let gpus: Vec<Gpu> = (0..count).map(|i| Gpu::open(i).unwrap()).collect();
    let mut checked = 0;
    for &(c, l, m, per_e) in &CONFIGS {
        let mut net = Network::new(c, l).unwrap();
        net.store_random(1, m);
        let g = *net.geometry();
        let mut msgs = vec![0u16; m as usize * c];
        for (k, msg) in msgs.chunks_mut(c).enumerate() {
            message(&g, 1, k as u64, msg);
        }
        let mut pr = Vec::new();
        let mut p = vec![0u16; c];
        for e in 1..c {
            let plan = ProbePlan::new(g, 1, m, 7 + e as u64, per_e, e).unwrap();
            for i in 0..per_e {
                plan.probe(i, &mut p);
                pr.extend_from_slice(&p);
            }
        }
        let k = pr.len() / c;
        let params = Params::default();
        let mut states = vec![0; k * g.row_words()];
        let mut stats = vec![Stats::default(); k];
        retrieve_batch(&g, net.weights(), &pr, Rule::Joint, &params, &mut states, &mut stats).unwrap();
        let mut decoded = vec![Decoded::default(); k * c];
        retrieve_batch_decoded(&g, net.weights(), &pr, Rule::Joint, &params, &mut decoded, &mut stats).unwrap();
        for ranks in (1..=count.min(4)).filter(|&r| r == 1 || r == count.min(4) || r == 2) {
            let used = &gpus[..ranks];
            // Stored on the devices: each shard = the CPU's W restricted to its columns.
            let stored = ShardedNetwork::store(used, g, &msgs).unwrap();
            // Shards are whole clusters: more GPUs than clusters use the first C.
            let ranks = ranks.min(c);
            assert_eq!(stored.devices(), ranks, "{c}x{l}: GPUs used");
            for (r, shard_net) in stored.shards().iter().enumerate() {
                let s = Shard::of(&g, r, ranks);
                let mut part = vec![0; s.words(&g)];
                s.columns_of(&g, net.weights(), &mut part);
                assert!(
                    shard_net.download_words().unwrap() == part,
                    "{c}x{l}: shard {r} of {ranks} stored differently"
                );
            }
            let mut sharded = ShardedNetwork::upload(used, &net).unwrap();
            let out = sharded.retrieve(&pr, &params).unwrap();
            assert!(out.states == states, "{c}x{l} over {ranks} GPUs: states differ");
            assert_eq!(out.stats, stats, "{c}x{l} over {ranks} GPUs: iteration counts differ");
            sharded.set_chunk_probes(1_000);
            let dec = sharded.retrieve_decoded(&pr, &params).unwrap();
            assert!(dec.decoded == decoded, "{c}x{l} over {ranks} GPUs: decoded results differ");
            let dec = stored.retrieve_decoded(&pr, &params).unwrap();
            assert!(dec.decoded == decoded, "{c}x{l} over {ranks} GPUs (stored there): decoded results differ");
            // W replicated (stored on GPU 0 and broadcast, or uploaded to each), probes split.
            for rep in
                [ReplicatedNetwork::store(used, g, &msgs).unwrap(), ReplicatedNetwork::upload(used, &net).unwrap()]
            {
                let dec = rep.retrieve_decoded(&pr, Rule::Joint, &params).unwrap();
                assert!(dec.decoded == decoded && dec.stats == stats, "{c}x{l} replicated on {ranks} GPUs differs");
                // Into page-locked memory (portable: every GPU's part lands in one buffer).
                let (pinned, mut out) =
                    (Pinned::from_slice(&used[0], &pr).unwrap(), Pinned::zeroed(&used[0], k * c).unwrap());
                let run = rep.retrieve_decoded_into(&pinned, Rule::Joint, &params, &mut out, Vec::new()).unwrap();
                assert!(
                    *out == decoded[..] && run.stats == stats,
                    "{c}x{l} replicated on {ranks} GPUs, pinned, differs"
                );
                let mut sos = vec![Decoded::default(); k * c];
                retrieve_batch_decoded(&g, net.weights(), &pr, Rule::SumOfSum, &params, &mut sos, &mut stats).unwrap();
                let dec = rep.retrieve_decoded(&pr, Rule::SumOfSum, &params).unwrap();
                assert!(
                    dec.decoded == sos && dec.stats == stats,
                    "{c}x{l} replicated sum-of-sum on {ranks} GPUs differs"
                );
                retrieve_batch_decoded(&g, net.weights(), &pr, Rule::Joint, &params, &mut decoded, &mut stats).unwrap();
            }
            println!("{c}x{l}: {k} probes over {ranks} GPU(s), W sharded and W replicated (pageable and pinned): states, counts and decoded results = CPU");
            checked += ranks;
        }
    }
    assert!(checked >= CONFIGS.len());
}

/// One shard per rank, communicator from ranks (`store_rank`, `ncclCommInitRank`): two ranks as
/// two threads here (each its own GPU, context and communicator, as two processes would have)
/// find what the CPU finds. The processes themselves: `gbnn bench-gpus --distributed`. With one
/// GPU, one rank (no communicator): `make gpu-test` runs on every GPU count.
#[test]
#[ignore = "needs a CUDA GPU (2 and NCCL for the exchange)"]
fn ranks_with_a_communicator_from_ranks_equal_the_cpu() {
    let n = Gpu::count().min(2);
    assert!(n >= 1, "a CUDA GPU");
    if n == 1 {
        println!("only 1 GPU here: one rank, the exchange between ranks is not exercised");
    }
    let (c, l, m, per_e) = CONFIGS[0];
    let mut net = Network::new(c, l).unwrap();
    net.store_random(1, m);
    let g = *net.geometry();
    let mut msgs = vec![0u16; m as usize * c];
    for (k, msg) in msgs.chunks_mut(c).enumerate() {
        message(&g, 1, k as u64, msg);
    }
    let plan = ProbePlan::new(g, 1, m, 9, per_e, c / 2).unwrap();
    let mut pr = vec![0u16; per_e as usize * c];
    for (i, p) in pr.chunks_mut(c).enumerate() {
        plan.probe(i as u64, p);
    }
    let k = pr.len() / c;
    let params = Params::default();
    let mut decoded = vec![Decoded::default(); k * c];
    let mut stats = vec![Stats::default(); k];
    retrieve_batch_decoded(&g, net.weights(), &pr, Rule::Joint, &params, &mut decoded, &mut stats).unwrap();
    let id = neurobits_gpu_host::gbnn::nccl_id().unwrap();
    let (msgs, pr) = (std::sync::Arc::new(msgs), std::sync::Arc::new(pr));
    let ranks: Vec<_> = (0..n)
        .map(|rank| {
            let (msgs, pr) = (msgs.clone(), pr.clone());
            std::thread::spawn(move || {
                let gpu = Gpu::open(rank).unwrap();
                let sharded = ShardedNetwork::store_rank(&gpu, g, &msgs, rank, n, id).unwrap();
                assert_eq!(sharded.ranks(), n);
                sharded.retrieve_decoded(&pr, &Params::default()).unwrap()
            })
        })
        .collect();
    for (rank, h) in ranks.into_iter().enumerate() {
        let out = h.join().unwrap();
        assert!(out.decoded == decoded && out.stats == stats, "rank {rank} of {n} differs from the CPU");
    }
    println!("{c}x{l}: {k} probes over {n} rank(s) (communicator from ranks): decoded results and counts = CPU");
}
