//! The joint rule's kernels (Algorithm 2): each probe's known rows and erased clusters, the
//! first pass (an AND of known rows) and the iterations, sharded by columns.

use super::*;

kernel! {
    /// Per-probe index for the joint rule, one thread per probe: the rows of its known neurons
    /// (the core's `known_rows`) and their number, its erased clusters in order and their mask.
    fn gbnn_probe_index(a: ProbeIndex {
        shape: Shape,
        k: u32,
        probes: DevPtr<u16>,
        rows: DevMut<u32>,
        known: DevMut<u32>,
        erased_list: DevMut<u8>,
        erased_mask: DevMut<u64>,
    }) {
        let g = geometry(a.shape);
        let p = gid();
        if p >= a.k as usize {
            return;
        }
        let cc = g.clusters();
        let symbols = from_raw_parts(a.probes.0.add(p * cc), cc);
        *a.known.0.add(p) = known_rows(&g, symbols, from_raw_parts_mut(a.rows.0.add(p * cc), cc)) as u32;
        let mask = g.erased_mask(symbols);
        *a.erased_mask.0.add(p) = mask;
        for (j, c) in set_bits(mask).enumerate() {
            *a.erased_list.0.add(p * cc + j) = c as u8;
        }
    }
}

kernel! {
    /// The joint first pass, one thread per (probe, owned erased slot `j < e_max`, word): the
    /// AND of the known rows in the cluster's columns (`joint_first_word_cols`). Known clusters
    /// need no thread: nothing reads their words (decoding takes them from the probe); a shard's
    /// grid covers only its own erased clusters.
    fn gbnn_joint_first(a: JointFirst {
        shape: Shape,
        shard: Shard,
        e_max: u32,
        k: u32,
        w: DevPtr<Word>,
        rows: DevPtr<u32>,
        known: DevPtr<u32>,
        erased_list: DevPtr<u8>,
        erased_mask: DevPtr<u64>,
        sparse: u32,
        next: DevMut<Word>,
        occ_next: DevMut<u64>,
        changed: DevMut<u32>,
    }) {
        let ix = JointIndex { rows: a.rows, known: a.known, erased_list: a.erased_list, erased_mask: a.erased_mask };
        let g = geometry(a.shape);
        let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
        let (rest, wi) = split(gid(), wpc);
        let (p, j) = split(rest, a.e_max as usize);
        if p >= a.k as usize {
            return;
        }
        let Some(cl) = owned_slot(*ix.erased_mask.0.add(p), &a.shard, j) else { return };
        let nk = *ix.known.0.add(p) as usize;
        let w = from_raw_parts(a.w.0, a.shard.words(&g));
        let out = joint_first_word_cols(&g, w, &a.shard, from_raw_parts(ix.rows.0.add(p * cc), nk), cl, wi);
        if out != 0 || a.sparse == 0 {
            *a.next.0.add(p * rw + cl * wpc + wi) = out;
        }
        // The erased words were zero before (see `JointFirst::sparse`): a nonzero word is a change.
        if out != 0 {
            let ow = occupancy_words(&g);
            AtomicU64::from_ptr(a.occ_next.0.add((p * cc + cl) * ow + wi / 64)).fetch_or(1 << (wi % 64), Relaxed);
            note_change(a.changed.0, p);
        }
    }
}

kernel! {
    /// A later joint update, one thread per (active probe, owned erased slot): only erased clusters
    /// change, so known clusters get no thread; support is gathered from the cluster's columns
    /// (`joint_iter_word_cols`: what a shard holds) through the occupancy of `v`.
    /// Only the words nonzero now or at the previous update (`occ_prev`, which covers both since
    /// the active set only shrinks) can differ between `v` and `next`, so only those are written
    /// (Lemma 1: a zero word stays zero).
    fn gbnn_step_joint(a: StepJoint {
        shape: Shape,
        shard: Shard,
        e_max: u32,
        n_active: u32,
        w: DevPtr<Word>,
        rows: DevPtr<u32>,
        known: DevPtr<u32>,
        erased_list: DevPtr<u8>,
        erased_mask: DevPtr<u64>,
        occ: DevPtr<u64>,
        occ_prev: DevMut<u64>,
        cur: DevPtr<Word>,
        next: DevMut<Word>,
        list: DevPtr<u32>,
        changed: DevMut<u32>,
    }) {
        let ix = JointIndex { rows: a.rows, known: a.known, erased_list: a.erased_list, erased_mask: a.erased_mask };
        let g = geometry(a.shape);
        let (cc, rw, wpc) = (g.clusters(), g.row_words(), g.words_per_cluster());
        let (act, j) = split(gid(), a.e_max as usize);
        if act >= a.n_active as usize {
            return;
        }
        let p = *a.list.0.add(act) as usize;
        let erased = *ix.erased_mask.0.add(p);
        let Some(cl) = owned_slot(erased, &a.shard, j) else { return };
        let ow = occupancy_words(&g);
        let occ_p = from_raw_parts(a.occ.0.add(p * cc * ow), cc * ow);
        let w = from_raw_parts(a.w.0, a.shard.words(&g));
        let v = from_raw_parts(a.cur.0.add(p * rw), rw);
        let mut differs = false;
        for part in 0..ow {
            let at = (p * cc + cl) * ow + part;
            let mut occ_next = 0;
            for wi in set_bits(occ_p[cl * ow + part] | *a.occ_prev.0.add(at)) {
                let word = cl * wpc + part * 64 + wi;
                let out = joint_iter_word_cols(&g, w, &a.shard, v, erased, cl, part * 64 + wi, occ_p);
                *a.next.0.add(p * rw + word) = out;
                occ_next |= ((out != 0) as u64) << wi;
                differs |= out != v[word];
            }
            // The previous state's occupancy is read; the next state's takes its place.
            *a.occ_prev.0.add(at) = occ_next;
        }
        if differs {
            note_change(a.changed.0, p);
        }
    }
}
