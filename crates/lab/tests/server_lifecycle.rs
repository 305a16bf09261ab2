//! Starting, using, restarting and dropping throwaway clusters.

use std::time::Instant;

use pgrig_lab::{Server, ServerOptions};

#[test]
fn started_server_answers_queries_and_drop_removes_everything() {
    let t = Instant::now();
    let server = Server::start(ServerOptions::default()).expect("server starts");
    eprintln!("cluster start took {:?}", t.elapsed());
    assert_eq!(server.psql("postgres", "SELECT 40 + 2").unwrap(), "42");
    assert_eq!(
        server.psql("postgres", "SELECT current_user").unwrap(),
        "postgres"
    );
    let root = server.root_dir().to_path_buf();
    let pid = server.postmaster_pid().unwrap();
    assert!(server
        .socket_dir()
        .join(format!(".s.PGSQL.{}", server.port()))
        .exists());
    drop(server);
    assert!(!root.exists(), "cluster directory removed");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists() || !is_postgres(pid));
}

fn is_postgres(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains("(postgres)") && !s.contains(") Z"))
        .unwrap_or(false)
}
