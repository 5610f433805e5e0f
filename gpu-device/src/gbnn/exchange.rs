//! Several GPUs: the states of the erased clusters packed into records for the exchange between
//! shards, and unpacked on the other side.

use super::*;

kernel! {
    /// A shard's share of the exchange after a joint update: its erased clusters of `next` as
    /// sparse records (dense overflow slots for the rare crowded cluster), one thread per (active
    /// probe, owned slot).
    fn gbnn_pack(a: Pack {
        shape: Shape,
        shard: Shard,
        eo_max: u32,
        n_active: u32,
        erased_mask: DevPtr<u64>,
        list: DevPtr<u32>,
        next: DevPtr<Word>,
        send: DevMut<Word>,
        ovf: DevMut<Word>,
        ovf_count: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, wpc) = (g.row_words(), g.words_per_cluster());
        let i = gid();
        let (act, jo) = split(i, a.eo_max as usize);
        if act >= a.n_active as usize {
            return;
        }
        let p = *a.list.0.add(act) as usize;
        let Some(cl) = owned_slot(*a.erased_mask.0.add(p), &a.shard, jo) else { return };
        let words = from_raw_parts(a.next.0.add(p * rw + cl * wpc), wpc);
        let mut rec = [0; RECORD_WORDS];
        if !sparse_record(words, &mut rec) {
            let slot = AtomicU32::from_ptr(a.ovf_count.0).fetch_add(1, Relaxed);
            for (wi, &x) in words.iter().enumerate() {
                *a.ovf.0.add(slot as usize * wpc + wi) = x;
            }
            sparse_overflow(&mut rec, slot);
        }
        for (j, &x) in rec.iter().enumerate() {
            *a.send.0.add(i * RECORD_WORDS + j) = x;
        }
    }
}

kernel! {
    /// Every shard's records, gathered rank-major, into `next`, one thread per (active probe,
    /// owned slot) and source rank in a loop; flags the probes whose words changed (the shard's
    /// own words too, so every device ends with the same flags). Only words that differ from
    /// what `next` holds are written.
    fn gbnn_unpack(a: Unpack {
        shape: Shape,
        ranks: u32,
        eo_max: u32,
        n_active: u32,
        ovf_max: u32,
        erased_mask: DevPtr<u64>,
        list: DevPtr<u32>,
        recv: DevPtr<Word>,
        recv_ovf: DevPtr<Word>,
        cur: DevPtr<Word>,
        next: DevMut<Word>,
        occ_next: DevMut<u64>,
        changed: DevMut<u32>,
    }) {
        let g = geometry(a.shape);
        let (rw, wpc, cc, ow) = (g.row_words(), g.words_per_cluster(), g.clusters(), occupancy_words(&g));
        let slot = gid();
        let (act, jo) = split(slot, a.eo_max as usize);
        if act >= a.n_active as usize {
            return;
        }
        let p = *a.list.0.add(act) as usize;
        let erased = *a.erased_mask.0.add(p);
        let block = a.n_active as usize * a.eo_max as usize * RECORD_WORDS;
        let mut differs = false;
        for q in 0..a.ranks as usize {
            let Some(cl) = owned_slot(erased, &Shard::of(&g, q, a.ranks as usize), jo) else { continue };
            let rec = from_raw_parts(a.recv.0.add(q * block + slot * RECORD_WORDS), RECORD_WORDS);
            let dense = a.recv_ovf.0.add((q * a.ovf_max as usize + sparse_overflow_index(rec)) * wpc);
            let at = p * rw + cl * wpc;
            let mut occ = 0u64;
            for wi in 0..wpc {
                let x = match sparse_word(rec, wi) {
                    Some(x) => x,
                    None => *dense.add(wi),
                };
                let old = a.next.0.add(at + wi);
                if *old != x {
                    *old = x;
                }
                differs |= x != *a.cur.0.add(at + wi);
                occ |= ((x != 0) as u64) << (wi % 64);
                if wi % 64 == 63 || wi + 1 == wpc {
                    *a.occ_next.0.add((p * cc + cl) * ow + wi / 64) = occ;
                    occ = 0;
                }
            }
        }
        if differs {
            note_change(a.changed.0, p);
        }
    }
}
