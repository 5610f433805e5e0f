//! The hostile-input run's quick set (`tests/hostile/run.py --quick`: the hand-written cases
//! marked quick and every 12th generated one, 392 cases) against this build's binary:
//! every case ends in time with the contract (exit 0/1/2, one `error:` line, no panic text, no
//! temporary files, the user's files intact). The full run is `make hostile`. Python 3 (the
//! standard library only) must be on the path: missing, this fails.

#[test]
fn the_quick_hostile_set_holds() {
    let bin = assert_cmd::cargo::cargo_bin("neurobits");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hostile/run.py");
    let o = std::process::Command::new("python3")
        .arg(script)
        .arg(&bin)
        .arg("--quick")
        .output()
        .expect("python3 is needed for the hostile-input run");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "hostile quick set failed:\n{out}\n{err}");
    assert!(out.contains(", 0 failed, 0 not judged"), "{out}");
}
