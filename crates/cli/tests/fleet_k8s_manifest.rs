//! `pgrig k8s manifest`: the emitted Jobs validate against the Kubernetes API schema
//! (`kubernetes-validate --strict`, PyPI; .ci/run installs it) and say what a segmented run
//! needs: an Indexed Job whose completion index is the segment, the coordinator, the password
//! from a Secret, resource requests, anti-affinity.

use std::process::Command;

fn manifest(extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args([
            "k8s",
            "manifest",
            "--segments",
            "4",
            "--image",
            "ghcr.io/example/pgrig:0.1",
        ])
        .args([
            "--target-secret",
            "pg-bench",
            "--target-host",
            "pg.bench.svc",
        ])
        .args(["--namespace", "bench", "--cpu", "3", "--memory", "2Gi"])
        .args(extra)
        .output()
        .expect("pgrig")
}

/// The YAML stream as JSON documents, read by PyYAML (kubernetes-validate's own reader).
fn documents(yaml: &str) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.yaml");
    std::fs::write(&path, yaml).unwrap();
    let out = Command::new("python3")
        .args(["-c", "import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn k8s_manifest_validates_against_the_kubernetes_schema() {
    let out = manifest(&["--", "-c", "64", "-j", "8", "-T", "300", "-S"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.yaml");
    std::fs::write(&path, &out.stdout).unwrap();
    let v = Command::new("kubernetes-validate")
        .args(["--strict", "-k", "1.30.0"])
        .arg(&path)
        .output()
        .expect(
            "kubernetes-validate is the oracle: pip install kubernetes-validate (.ci/run does)",
        );
    let report =
        String::from_utf8_lossy(&v.stdout).to_string() + &String::from_utf8_lossy(&v.stderr);
    assert!(v.status.success(), "{report}");
    assert_eq!(
        report.matches("passed for resource job/").count(),
        2,
        "{report}"
    );
}

#[test]
fn k8s_manifest_runs_one_segment_per_completion_index_with_the_password_from_a_secret() {
    let out = manifest(&["--", "-c", "64", "-T", "300", "-S"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let docs = documents(&text);
    assert_eq!(docs.len(), 2);
    let (w, c) = (&docs[0], &docs[1]);
    assert_eq!(w["metadata"]["namespace"], "bench");
    let spec = &w["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        (spec["completions"].as_u64(), spec["parallelism"].as_u64()),
        (Some(4), Some(4))
    );
    let pod = &spec["template"]["spec"];
    let wc = &pod["containers"][0];
    let args: Vec<&str> = wc["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&args[..3], ["worker", "--segment", "$(SEGMENT)/4"]);
    let env = wc["env"].as_array().unwrap();
    let var = |n: &str| {
        env.iter()
            .find(|e| e["name"] == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    assert_eq!(
        var("SEGMENT")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    assert_eq!(
        var("PGPASSWORD")["valueFrom"]["secretKeyRef"]["name"],
        "pg-bench"
    );
    assert_eq!(var("PGHOST")["value"], "pg.bench.svc");
    assert_eq!(wc["resources"]["requests"]["cpu"], "3");
    assert_eq!(wc["resources"]["requests"]["memory"], "2Gi");
    let anti =
        &pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(anti["topologyKey"], "kubernetes.io/hostname");
    let cargs: Vec<&str> = c["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(&cargs[..3], ["bench", "--segments", "4"]);
    assert!(
        cargs.ends_with(&["-c", "64", "-T", "300", "-S"]),
        "{cargs:?}"
    );
}

#[test]
fn k8s_manifest_refuses_a_password_among_the_options() {
    let out = manifest(&["--", "-c", "8", "postgresql://u:hunter2@db/x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--target-secret"), "{err}");
    assert!(out.stdout.is_empty());
}

fn refused(extra: &[&str], needle: &str) {
    let out = manifest(extra);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{extra:?}: {err}");
    assert!(err.contains(needle), "{extra:?}: {err}");
    assert!(out.stdout.is_empty(), "{extra:?}: printed a manifest");
}

/// Issue 21 item 10: everything that would fail only in a pod fails here, before printing.
#[test]
fn k8s_manifest_validates_names_options_and_the_target_before_printing() {
    refused(
        &["--target-user", "u password=x", "--", "-c", "8"],
        "--target-user",
    );
    let out = manifest(&["--target-user", "u password=x", "--", "-c", "8"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("password=x"));
    refused(
        &["--name", "My_Bench", "--", "-c", "8"],
        "--name \"My_Bench\"",
    );
    refused(&["--", "-c", "2"], "--segments 4 needs at least 4 clients");
    refused(&["--", "-c", "8", "--bogus"], "the pgbench options");
    refused(&["--", "-c", "8", "-h", "elsewhere"], "the pgbench options");
    refused(
        &["--target-host", "pg bench", "--", "-c", "8"],
        "--target-host",
    );
    refused(&["--target-db", "db'x", "--", "-c", "8"], "--target-db");
    refused(
        &["--target-secret-key", "a b", "--", "-c", "8"],
        "--target-secret-key",
    );
    refused(&["--run-id", "Run_1", "--", "-c", "8"], "--run-id");
}

/// Issue 21 item 10: Kubernetes expands `$(VAR)` in args; the options reach pgrig as written.
#[test]
fn k8s_manifest_escapes_dollar_expansions_in_the_options() {
    let out = manifest(&["--", "-c", "8", "-D", "x=$(HOME)"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = documents(&String::from_utf8(out.stdout).unwrap());
    let args = docs[1]["spec"]["template"]["spec"]["containers"][0]["args"].clone();
    let args: Vec<String> = serde_json::from_value(args).unwrap();
    assert!(
        args.ends_with(&["-D".to_string(), "x=$$(HOME)".to_string()]),
        "{args:?}"
    );
}

/// Issue 20 item 8(f) and issue 21: names unique per run, deadlines, the results store, a log
/// directory for the workers, and workers that join only a run with these options.
#[test]
fn k8s_manifest_runs_are_unique_bounded_stored_and_logged() {
    let out = manifest(&["--run-id", "r42", "--", "-c", "8", "-T", "300", "-l"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = documents(&String::from_utf8(out.stdout).unwrap());
    let (w, c) = (&docs[0], &docs[1]);
    assert_eq!(w["metadata"]["name"], "pgrig-r42-workers");
    assert_eq!(c["metadata"]["name"], "pgrig-r42-coordinator");
    for d in [w, c] {
        assert_eq!(d["spec"]["activeDeadlineSeconds"], 1200);
        assert_eq!(d["spec"]["ttlSecondsAfterFinished"], 86400);
    }
    let pod = &w["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["emptyDir"], serde_json::json!({}));
    let wargs: Vec<String> = serde_json::from_value(pod["containers"][0]["args"].clone()).unwrap();
    let at = |v: &[String], k: &str| v[v.iter().position(|a| a == k).unwrap() + 1].clone();
    assert_eq!(
        at(&wargs, "--log-dir"),
        pod["containers"][0]["volumeMounts"][0]["mountPath"]
    );
    assert_eq!(at(&wargs, "--options-digest").len(), 16);
    let cargs: Vec<String> =
        serde_json::from_value(c["spec"]["template"]["spec"]["containers"][0]["args"].clone())
            .unwrap();
    assert!(
        at(&cargs, "--store").starts_with("postgresql://"),
        "{cargs:?}"
    );
    let other = manifest(&["--run-id", "r43", "--", "-c", "8"]);
    assert!(String::from_utf8_lossy(&other.stdout).contains("pgrig-r43-workers"));
}

/// The digest the manifest gives the workers is the one the coordinator computes.
#[test]
fn k8s_manifest_options_digest_matches_the_coordinator() {
    use std::io::{BufRead, BufReader};
    let db = pgrig_testkit::fresh_db("k8s_digest");
    let opts = ["-n", "-S", "-c", "4", "-T", "2"];
    let out = manifest(&[&["--"][..], &opts].concat());
    let docs = documents(&String::from_utf8(out.stdout).unwrap());
    let wargs: Vec<String> = serde_json::from_value(
        docs[0]["spec"]["template"]["spec"]["containers"][0]["args"].clone(),
    )
    .unwrap();
    let digest = wargs[wargs.iter().position(|a| a == "--options-digest").unwrap() + 1].clone();
    let mut coord = Command::new(env!("CARGO_BIN_EXE_pgrig"))
        .args([
            "bench",
            "--segments",
            "4",
            "--coordinator",
            &db.url(),
            "--segments-wait",
            "5",
        ])
        .args(opts)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let line = BufReader::new(coord.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains("options digest"))
        .unwrap_or_default();
    let _ = coord.kill();
    let _ = coord.wait();
    assert!(
        line.contains(&format!("(options digest {digest})")),
        "{line} vs {digest}"
    );
}
