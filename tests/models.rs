//! The model API of the library: every model fits, saves, loads and predicts the same; batches
//! learned with `partial_fit` equal one `fit`; an index grown by `append` equals one built at
//! once; every damaged model file is refused with one line naming it.

use neurobits::cortical::{model::Cortical, Config as CorticalConfig};
use neurobits::flyhash::classifier::{FlyNN, FlyNNConfig};
use neurobits::flyhash::data::Matrix;
use neurobits::flyhash::index::FlyIndex;
use neurobits::flyhash::model::{FlyHash, FlyHashConfig};
use neurobits::gbnn::model::{Gbnn, GbnnConfig};
use neurobits::model::Model;
use neurobits::ocnn::{model::Ocnn, points::Points, Config as OcnnConfig};
use neurobits::Error;
use neurobits_core::prng;

/// `rows` vectors of `cols` values in 0..256 from the portable PRNG, in `classes` groups around
/// their own centres (so that a classifier has something to learn).
fn blobs(rows: usize, cols: usize, classes: usize, seed: u64) -> (Matrix, Vec<i64>) {
    let key = prng::stream_key(seed, 77);
    let draw = |i: u64| prng::draw(key, i);
    let mut data = Vec::with_capacity(rows * cols);
    let mut labels = Vec::with_capacity(rows);
    for r in 0..rows {
        let c = r % classes;
        labels.push(c as i64 * 10 + 3); // labels need not be 0..classes
        for j in 0..cols {
            let centre = (draw((c * cols + j) as u64) % 200) as f32;
            let noise = (draw((1 << 40) + (r * cols + j) as u64) % 40) as f32;
            data.push(centre + noise);
        }
    }
    (Matrix { rows, cols, data }, labels)
}

fn rows(m: &Matrix, r: std::ops::Range<usize>) -> Matrix {
    Matrix { rows: r.len(), cols: m.cols, data: m.data[r.start * m.cols..r.end * m.cols].to_vec() }
}

#[test]
fn flynn_partial_fit_in_batches_equals_one_fit_and_survives_saving() {
    let (x, y) = blobs(300, 40, 4, 1);
    let cfg = FlyNNConfig {
        hash: FlyHashConfig { code_bits: Some(640), ..Default::default() },
        decay: 0.9,
        centre: false,
        rounds: 0,
    };
    // Without centring, learning only counts: batches give exactly one fit's memories. (With
    // it, the mean is the first batch's; see the next test.)
    let mut whole = FlyNN::new(cfg.clone());
    whole.fit(&x, &y).unwrap();
    let mut parts = FlyNN::new(cfg);
    // The second batch brings a class the first did not have.
    let order: Vec<usize> = (0..300).filter(|r| y[*r] != 33).chain((0..300).filter(|r| y[*r] == 33)).collect();
    let pick = |ids: &[usize]| Matrix {
        rows: ids.len(),
        cols: 40,
        data: ids.iter().flat_map(|&r| x.data[r * 40..(r + 1) * 40].to_vec()).collect(),
    };
    let (a, b) = order.split_at(150);
    parts.partial_fit(&pick(a), &a.iter().map(|&r| y[r]).collect::<Vec<_>>()).unwrap();
    parts.partial_fit(&pick(b), &b.iter().map(|&r| y[r]).collect::<Vec<_>>()).unwrap();
    assert_eq!(whole.classes().unwrap(), [3, 13, 23, 33]);
    assert_eq!(whole.to_bytes().unwrap(), parts.to_bytes().unwrap(), "the same memories either way");
    let acc = whole.score(&x, &y).unwrap();
    assert!(acc > 0.9, "separable blobs: accuracy {acc}");
    let back = FlyNN::from_bytes(&whole.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.predict(&x).unwrap(), whole.predict(&x).unwrap());
    let proba = whole.predict_proba(&x).unwrap();
    let pred = whole.predict(&x).unwrap();
    for (row, p) in proba.chunks(4).zip(&pred) {
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let best = row.iter().enumerate().fold(0, |b, (i, v)| if *v > row[b] { i } else { b });
        assert_eq!(whole.classes().unwrap()[best], *p, "the largest value is the predicted class");
    }
}

#[test]
fn flynn_centres_on_the_training_mean_and_keeps_it_in_the_file() {
    let (x, y) = blobs(300, 40, 4, 2);
    // A common offset is what centring removes: the shifted data gets (nearly, up to float
    // rounding of the mean) the same classes; the mean travels in the saved model.
    let shifted = Matrix { data: x.data.iter().map(|v| v + 64.0).collect(), ..x.clone() };
    let cfg = FlyNNConfig { hash: FlyHashConfig { code_bits: Some(640), ..Default::default() }, ..Default::default() };
    assert!(cfg.centre, "centring is the library's default");
    let (mut a, mut b) = (FlyNN::new(cfg.clone()), FlyNN::new(cfg));
    a.fit(&x, &y).unwrap();
    b.fit(&shifted, &y).unwrap();
    let (pa, pb) = (a.predict(&x).unwrap(), b.predict(&shifted).unwrap());
    let same = pa.iter().zip(&pb).filter(|(p, q)| p == q).count();
    assert!(same >= 290, "{same} of 300 classes agree");
    let back = FlyNN::from_bytes(&b.to_bytes().unwrap(), "c").unwrap();
    assert_eq!(back.predict(&shifted).unwrap(), pb, "the mean is saved with the model");
    // A configuration without `centre` takes the default; a model file written before `centre`
    // existed (its header without the key) reads as not centred, as it was fitted.
    let partial: FlyNNConfig = serde_json::from_str(r#"{"decay": 0.9}"#).unwrap();
    assert!(partial.centre && partial.decay == 0.9);
    let mut raw = FlyNN::new(FlyNNConfig { centre: false, ..FlyNNConfig::default() });
    raw.fit(&x, &y).unwrap();
    let (mut head, payload) = raw.parts().unwrap();
    head["config"].as_object_mut().unwrap().remove("centre").expect("the key is written");
    let old = neurobits::io::model_file::encode(FlyNN::KIND, &head, &payload).unwrap();
    let old = FlyNN::from_bytes(&old, "old.nbm").unwrap();
    assert!(!old.config.centre);
    assert_eq!(old.predict(&x).unwrap(), raw.predict(&x).unwrap());
}

#[test]
fn an_index_grown_by_append_answers_as_one_built_at_once() {
    let (x, _) = blobs(200, 30, 5, 2);
    let cfg = FlyHashConfig { code_bits: Some(512), winners: Some(32), ..Default::default() };
    let mut all = FlyIndex::new(cfg.clone(), 30).unwrap();
    all.add(&x).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("half.nbi");
    let mut half = FlyIndex::new(cfg, 30).unwrap();
    half.add(&rows(&x, 0..120)).unwrap();
    half.save(&path).unwrap();
    let before = std::fs::read(&path).unwrap();
    let ids = FlyIndex::append(&path, &rows(&x, 120..200), neurobits::device::Target::CPU).unwrap();
    assert_eq!(ids, 120..200);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..before.len()], &before[..], "append leaves what was there untouched");
    let grown = FlyIndex::load(&path).unwrap();
    assert_eq!(grown.codes(), all.codes());
    let q = rows(&x, 0..50);
    let (a, b) = (all.search(&q, 7).unwrap(), grown.search(&q, 7).unwrap());
    assert_eq!(a, b);
    // Each vector's nearest code is its own (or an identical one of a lower id: ties by id).
    let w = all.codes().len() / all.len();
    let code = |i: usize| &all.codes()[i * w..(i + 1) * w];
    assert!(
        (0..50).all(|i| a.distances[i * 7] == 0 && code(a.ids[i * 7] as usize) == code(i) && a.ids[i * 7] <= i as i64)
    );
    // More neighbours than codes: padded as faiss pads.
    let small = FlyIndex::load(&path).unwrap();
    let tiny = FlyIndex::new(small.hasher().config.clone(), 30).unwrap();
    let hits = tiny.search(&q, 3).unwrap();
    assert!(hits.ids.iter().all(|&i| i == -1) && hits.distances.iter().all(|&d| d == u32::MAX));
}

#[test]
fn flyhash_transform_is_the_same_after_loading_and_refuses_other_widths() {
    let (x, _) = blobs(20, 16, 2, 3);
    let mut h = FlyHash::new(FlyHashConfig::default());
    assert!(matches!(h.transform(&x), Err(Error::NotFitted(_))));
    h.fit(&x).unwrap();
    let back = FlyHash::from_bytes(&h.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.transform(&x).unwrap(), h.transform(&x).unwrap());
    let p = h.params().unwrap();
    assert_eq!((p.d, p.m, p.s, p.k), (16, 512, 1, 25));
    let e = h.transform(&rows(&blobs(2, 8, 1, 0).0, 0..2)).unwrap_err().to_string();
    assert!(e.contains("8 features per row") && e.contains("fitted on 16"), "{e}");
}

#[test]
fn gbnn_fit_retrieve_save_load_and_old_network_files() {
    let cfg = GbnnConfig { clusters: 4, neurons: 16, ..Default::default() };
    let msgs: Vec<i64> = (0..40).map(|i| (i * 7 + i / 4) % 16).collect();
    let mut a = Gbnn::new(cfg.clone());
    a.fit(&msgs).unwrap();
    let mut b = Gbnn::new(cfg);
    b.partial_fit(&msgs[..20]).unwrap().partial_fit(&msgs[20..]).unwrap();
    assert_eq!(a.network().unwrap().weights(), b.network().unwrap().weights());
    let probes: Vec<i64> = msgs.chunks(4).flat_map(|m| [-1, m[1], m[2], m[3]]).collect();
    let out = a.retrieve(&probes).unwrap();
    let back = Gbnn::from_bytes(&a.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.retrieve(&probes).unwrap(), out);
    // A network file of `gbnn store` loads as a model.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.nb");
    neurobits::io::netfile::save(&old, a.network().unwrap()).unwrap();
    assert_eq!(Gbnn::load(&old).unwrap().retrieve(&probes).unwrap(), out);
    let e = a.retrieve(&[0, 1, 2, 16]).unwrap_err().to_string();
    assert!(e.contains("cluster 4 of row 1 is 16"), "{e}");
}

#[test]
fn ocnn_fit_predict_and_saved_labels() {
    let (x, _) = blobs(40, 2, 2, 4);
    let p = Points { n: 40, dim: 2, coords: x.data.iter().map(|&v| v as f64).collect() };
    let mut m = Ocnn::new(OcnnConfig { iters: 200, ..Default::default() });
    let labels = m.fit_predict(&p).unwrap();
    assert_eq!(labels.len(), 40);
    let back = Ocnn::from_bytes(&m.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.labels().unwrap(), labels);
    assert_eq!(back.report().unwrap().hits_sha256, m.report().unwrap().hits_sha256);
    assert_eq!(back.config.links, neurobits::ocnn::Links::Mutual);
    assert!(OcnnConfig { threshold: Some(100), ..Default::default() }.validate().is_err());
    // A file written before the link rule existed (no key) was clustered over every pair and
    // says so; a configuration without the key takes the default.
    let (mut head, payload) = m.parts().unwrap();
    head["config"].as_object_mut().unwrap().remove("links").expect("the key is written");
    let old = Ocnn::from_bytes(&neurobits::io::model_file::encode(Ocnn::KIND, &head, &payload).unwrap(), "old.nbm");
    let old = old.unwrap();
    assert_eq!(old.config.links, neurobits::ocnn::Links::All);
    assert_eq!(old.labels().unwrap(), labels, "the labels are what they were");
    let partial: OcnnConfig = serde_json::from_str(r#"{"iters": 5}"#).unwrap();
    assert_eq!(partial.links, neurobits::ocnn::Links::Mutual);
}

#[test]
fn cortical_fit_predict_twice_and_after_loading() {
    let (raw, y) = blobs(30, 64, 3, 5);
    let x = Matrix { data: raw.data.iter().map(|v| (v / 16.0).floor().min(16.0)).collect(), ..raw };
    let mut net = Cortical::new(CorticalConfig { epochs: 3, ..Default::default() });
    net.fit(&x, &y).unwrap();
    let first = net.predict(&x).unwrap();
    assert_eq!(net.predict(&x).unwrap(), first);
    let back = Cortical::from_bytes(&net.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.predict(&x).unwrap(), first);
    assert_eq!(back.transform(&x).unwrap(), net.transform(&x).unwrap());
    assert_eq!(back.network().unwrap().weights_sha256(), net.network().unwrap().weights_sha256());
    // A file saved before the population-code readout (its payload ends after the labels) still
    // loads and predicts with the vote it was saved with: the same labels as the vote over the
    // same training features.
    let saved = neurobits::io::model_file::decode(&net.to_bytes().unwrap(), "mem", "cortical").unwrap();
    let codes = 8 + 4 * x.rows * 31 * 16;
    let old = &saved.payload[..saved.payload.len() - codes];
    let b = neurobits::io::model_file::encode("cortical", &saved.config, old).unwrap();
    let back_old = Cortical::from_bytes(&b, "old.nbm").unwrap();
    let feats = net.transform(&x).unwrap();
    let (n_hc, m) = (31, 16);
    let mut classes = y.clone();
    classes.sort_unstable();
    classes.dedup();
    let ids: Vec<u32> = y.iter().map(|l| classes.binary_search(l).unwrap() as u32).collect();
    let want: Vec<i64> = neurobits::cortical::quality::vote(&feats, &ids, &feats, n_hc, m)
        .into_iter()
        .map(|c| classes[c as usize])
        .collect();
    assert_eq!(back_old.predict(&x).unwrap(), want, "an old file predicts with its vote");
    // A file cut elsewhere is still refused by name.
    let b = neurobits::io::model_file::encode("cortical", &saved.config, &saved.payload[..saved.payload.len() - 4])
        .unwrap();
    let e = Cortical::from_bytes(&b, "cut.nbm").unwrap_err().to_string();
    assert!(e.starts_with("cut.nbm: "), "{e}");
}

/// Damaged files: each refusal is one line naming the file and what is wrong.
#[test]
fn damaged_model_files_are_refused_by_name() {
    let (x, y) = blobs(40, 8, 2, 6);
    let mut clf = FlyNN::new(FlyNNConfig::default());
    clf.fit(&x, &y).unwrap();
    let good = clf.to_bytes().unwrap();
    let check = |b: &[u8], want: &str| {
        let e = FlyNN::from_bytes(b, "m.nbm").unwrap_err().to_string();
        assert!(e.starts_with("m.nbm: ") && e.contains(want) && !e.contains('\n'), "{e}");
    };
    check(&good[..good.len() - 1], "truncated");
    check(&good[..20], "truncated");
    let mut flipped = good.clone();
    let mid = good.len() - 40;
    flipped[mid] ^= 1;
    check(&flipped, "checksum mismatch");
    let mut newer = good.clone();
    newer[8] = 9;
    check(&newer, "version 9 is newer");
    check(b"hello world, not a model", "bad magic");
    let mut longer = good.clone();
    longer.push(0);
    check(&longer, "after the end");
    let e = Ocnn::from_bytes(&good, "m.nbm").unwrap_err().to_string();
    assert!(e.contains("holds a flynn model, not a ocnn model"), "{e}");
    assert!(matches!(FlyNN::new(FlyNNConfig::default()).to_bytes(), Err(Error::NotFitted(_))));
    let bad = FlyNNConfig { decay: 1.5, ..Default::default() };
    assert_eq!(bad.validate().unwrap_err().to_string(), "decay = 1.5: must be in [0, 1]");
}

/// Nothing to judge is refused, not scored as 0 (issue 31): no rows, no coordinates.
#[test]
fn empty_inputs_are_refused_not_scored() {
    let (x, y) = blobs(20, 8, 2, 7);
    let empty = Matrix { rows: 0, cols: 8, data: vec![] };
    let mut clf = FlyNN::new(FlyNNConfig::default());
    clf.fit(&x, &y).unwrap();
    assert!(clf.score(&empty, &[]).unwrap_err().to_string().contains("no rows"));
    let (raw, yc) = blobs(6, 16, 2, 8);
    let img = Matrix { data: raw.data.iter().map(|v| (v / 16.0).floor().min(16.0)).collect(), ..raw };
    let mut net =
        Cortical::new(CorticalConfig { levels: 2, minicolumns: 8, epochs: 1, upsample: 1, ..Default::default() });
    net.fit(&img, &yc).unwrap();
    let none = Matrix { rows: 0, cols: 16, data: vec![] };
    assert!(net.score(&none, &[]).unwrap_err().to_string().contains("no images"));
    let flat = Points { n: 3, dim: 0, coords: vec![] };
    assert!(Ocnn::new(OcnnConfig::default()).fit(&flat).is_err());
    let e = neurobits::ocnn::points::parse(",\n,\n,\n", "commas").map(|p| p.dim);
    assert!(e.is_err(), "{e:?}");
}

/// The LGN threshold a network was fitted with travels in its file; a file from before the
/// threshold could be chosen (no `lgn_threshold` in its header, its network an `NBCORT2` one) was
/// fitted with θ = 16 and reads images so.
#[test]
fn cortical_files_keep_their_lgn_threshold() {
    let (raw, y) = blobs(30, 64, 3, 5);
    let x = Matrix { data: raw.data.iter().map(|v| (v / 16.0).floor().min(16.0)).collect(), ..raw };
    let saved =
        |net: &Cortical| neurobits::io::model_file::decode(&net.to_bytes().unwrap(), "mem", "cortical").unwrap();
    // The file as written before: the header without the field, the network (the payload's
    // first length-prefixed part) without its last four bytes, under the old magic.
    let strip = |net: &Cortical| {
        let mut s = saved(net);
        assert!(s.config.as_object_mut().unwrap().remove("lgn_threshold").is_some());
        assert!(s.config["config"].as_object_mut().unwrap().remove("lgn_threshold").is_some());
        let n = u64::from_le_bytes(s.payload[..8].try_into().unwrap()) as usize;
        let mut old_net = s.payload[8..8 + n - 4].to_vec();
        old_net[..8].copy_from_slice(b"NBCORT2\0");
        let mut payload = ((n - 4) as u64).to_le_bytes().to_vec();
        payload.extend_from_slice(&old_net);
        payload.extend_from_slice(&s.payload[8 + n..]);
        let b = neurobits::io::model_file::encode("cortical", &s.config, &payload).unwrap();
        Cortical::from_bytes(&b, "old.nbm").unwrap()
    };
    let fit = |t: Option<i32>| {
        let mut net = Cortical::new(CorticalConfig { epochs: 3, lgn_threshold: t, ..Default::default() });
        net.fit(&x, &y).unwrap();
        net
    };
    let (n16, n12) = (fit(Some(16)), fit(None));
    assert_eq!(strip(&n16).transform(&x).unwrap(), n16.transform(&x).unwrap());
    assert_eq!(strip(&n16).predict(&x).unwrap(), n16.predict(&x).unwrap());
    let back = Cortical::from_bytes(&n12.to_bytes().unwrap(), "mem").unwrap();
    assert_eq!(back.transform(&x).unwrap(), n12.transform(&x).unwrap());
    assert_ne!(strip(&n12).transform(&x).unwrap(), n12.transform(&x).unwrap(), "an old file reads at θ = 16");
    // Its configuration says so, so that a refit of it (sklearn's clone) fits what was loaded.
    assert_eq!(strip(&n12).config.lgn_threshold, Some(16));
    assert_eq!(back.config.lgn_threshold, None, "a new file keeps the configuration as given");
    // The default under the competitive rule is 12, and the threshold matters.
    assert_eq!(fit(Some(12)).network().unwrap().weights_sha256(), n12.network().unwrap().weights_sha256());
    assert_ne!(n16.network().unwrap().weights_sha256(), n12.network().unwrap().weights_sha256());
    // A header or configuration that disagrees with its network is a damaged file, named.
    for key in [&["lgn_threshold"][..], &["config", "lgn_threshold"]] {
        let mut s = saved(&n12);
        let mut v = &mut s.config;
        for k in key {
            v = &mut v[*k];
        }
        *v = serde_json::json!(16);
        let b = neurobits::io::model_file::encode("cortical", &s.config, &s.payload).unwrap();
        let e = Cortical::from_bytes(&b, "odd.nbm").unwrap_err().to_string();
        assert!(e.starts_with("odd.nbm: ") && e.contains("LGN threshold"), "{key:?}: {e}");
    }
    for bad in [-1, 128] {
        let e = CorticalConfig { lgn_threshold: Some(bad), ..Default::default() }.validate().unwrap_err();
        assert!(e.to_string().contains(&bad.to_string()), "{e}");
    }
}
