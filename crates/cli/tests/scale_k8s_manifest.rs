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
