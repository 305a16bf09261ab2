//! `happened` and `errors` on constructed counts: each fires on its case and stays quiet on a
//! clean run.

use super::*;

fn clean() -> Counts {
    Counts {
        client_tx: 10_000,
        server_per_tx: 1.0,
        own_tx: 4,
        server_tx: Some(10_006),
        clients: 8,
        ..Counts::default()
    }
}

#[test]
fn a_clean_run_finds_nothing() {
    assert_eq!(happened(&clean()), None);
    assert!(errors(&clean()).is_empty());
}

#[test]
fn no_transaction_is_invalid() {
    let c = Counts {
        client_tx: 0,
        ..clean()
    };
    assert_eq!(happened(&c).unwrap().severity, Severity::Invalid);
}

#[test]
fn fewer_server_transactions_than_reported_is_invalid() {
    let c = Counts {
        server_tx: Some(5_000),
        ..clean()
    };
    let f = happened(&c).unwrap();
    assert_eq!(f.severity, Severity::Invalid);
    assert!(
        f.summary.contains("5000") && f.summary.contains("10000"),
        "{f:?}"
    );
    assert_eq!(f.evidence.len(), 3);
}

#[test]
fn another_workload_on_the_database_is_a_warning() {
    let c = Counts {
        server_tx: Some(13_000),
        ..clean()
    };
    let f = happened(&c).unwrap();
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.summary.starts_with("2996 transactions"), "{f:?}");
}

#[test]
fn a_script_of_two_transactions_expects_twice_the_count() {
    let c = Counts {
        server_per_tx: 2.0,
        server_tx: Some(20_004),
        ..clean()
    };
    assert_eq!(happened(&c), None);
    let c = Counts {
        server_per_tx: 2.0,
        ..clean()
    };
    assert_eq!(happened(&c).unwrap().severity, Severity::Invalid);
}

#[test]
fn unreadable_server_counters_check_only_the_client() {
    let c = Counts {
        server_tx: None,
        ..clean()
    };
    assert_eq!(happened(&c), None);
}

#[test]
fn aborted_clients_make_the_run_invalid_and_failures_a_warning() {
    let c = Counts {
        aborted_clients: 2,
        failed: 500,
        retried: 40,
        ..clean()
    };
    let f = errors(&c);
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].check, "errors.aborted_clients");
    assert_eq!(f[0].severity, Severity::Invalid);
    assert_eq!(f[1].check, "errors.failed");
    assert!(f[1].summary.starts_with("4.8 %"), "{:?}", f[1]);
    // 1 % or less is within the threshold
    let c = Counts {
        failed: 100,
        ..clean()
    };
    assert!(errors(&c).is_empty());
}
