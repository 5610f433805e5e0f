//! Throwaway: dumps population codes for readout experiments (not committed).
use neurobits::cortical::{self, cpu::Threads, ImageArgs, TrainConfig};
use std::io::Write;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (n, seed, val, out): (usize, u64, usize, &str) =
        (a[1].parse().unwrap(), a[2].parse().unwrap(), a[3].parse().unwrap(), &a[4]);
    let epochs: u32 = a.get(5).map(|s| s.parse().unwrap()).unwrap_or(20);
    let rate: u32 = a.get(6).map(|s| s.parse().unwrap()).unwrap_or(2);
    let c = TrainConfig {
        images: ImageArgs {
            data: "data/digits/digits.csv.gz".into(),
            train_per_class: if n == 0 { None } else { Some(n) },
            test_per_class: 50,
            validation_per_class: val,
            upsample: 2,
        },
        levels: 5,
        minicolumns: 16,
        epochs,
        exposure: 1,
        seed,
        beta: 0.5,
        rule: cortical::RuleArg::Competitive,
        rate,
        schedule: cortical::ScheduleArg::Synchronous,
        device: neurobits::device::DeviceChoice::Cpu,
        variant: cortical::VariantArg::PerLevel,
        single_thread: false,
        json: None,
        out: None,
    };
    let p = cortical::prepare(&c).unwrap();
    let (mut net, _) = cortical::train_cpu(&p, &c.config(), Threads::Rayon).unwrap();
    let (nw, n_hc, m) = (p.geo.bottom_words(), p.geo.hypercolumns(), p.geo.minicolumns());
    for (name, xs, ls) in [("train", &p.train_x, &p.train_labels), ("test", &p.test_x, &p.test_labels)] {
        let k = xs.len() / nw;
        let mut win = vec![-1i32; k * n_hc];
        let mut codes = vec![0i64; k * n_hc * m];
        let v = net.net();
        for i in 0..k {
            v.population(
                &xs[i * nw..(i + 1) * nw],
                &mut win[i * n_hc..(i + 1) * n_hc],
                &mut codes[i * n_hc * m..(i + 1) * n_hc * m],
            );
        }
        let mut f = std::fs::File::create(format!("{out}.{name}.codes")).unwrap();
        for c in &codes {
            f.write_all(&c.to_le_bytes()).unwrap();
        }
        let mut f = std::fs::File::create(format!("{out}.{name}.win")).unwrap();
        for c in &win {
            f.write_all(&c.to_le_bytes()).unwrap();
        }
        let mut f = std::fs::File::create(format!("{out}.{name}.lab")).unwrap();
        for c in ls.iter() {
            f.write_all(&c.to_le_bytes()).unwrap();
        }
        let mut f = std::fs::File::create(format!("{out}.{name}.bits")).unwrap();
        for c in xs.iter() {
            f.write_all(&c.to_le_bytes()).unwrap();
        }
        // check winners equal evaluate
        let ev = cortical::cpu::evaluate(&mut net, xs, Threads::Rayon);
        assert_eq!(ev, win);
    }
}
