//! pgreplay 1.2's command line: `getopt("vfro:h:p:W:s:E:d:cb:e:qj")` with GNU argument
//! permutation, its checks in its order, its messages, its help text and exit statuses.

use std::io::Write;

use pgrig_replay::time::parse_time;

pub const VERSION_LINE: &str = "pgreplay 1.2.0 (pgrig)";

/// The parsed command line.
#[derive(Debug, Default, Clone)]
pub struct Opts {
    pub parse_only: bool,
    pub replay_only: bool,
    pub outfile: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub password: Option<String>,
    pub speed: f64,
    pub encoding: Option<String>,
    pub debug: u8,
    pub csv: bool,
    pub begin: Option<String>,
    pub end: Option<String>,
    pub backslash_quote: bool,
    pub jump: bool,
    /// Input files (pgreplay: at most one; none is standard input).
    pub infiles: Vec<String>,
    /// `pgrig replay` only: `--compare`, `--json FILE`, `--store PATH|URL`
    pub pgrig: PgrigOpts,
}

/// `pgrig replay`'s own long options (not pgreplay's, not through the `pgreplay` link).
#[derive(Debug, Default, Clone)]
pub struct PgrigOpts {
    /// recorded against replayed latency per normalised statement
    pub compare: bool,
    /// the replay document, written to this file
    pub json: Option<String>,
    /// the results store (SQLite file or `postgresql://` URL) the replay is kept in
    pub store: Option<String>,
    /// `--compare`'s replayed side from the replay server's own log (its durations)
    pub replayed_log: Option<String>,
    /// `--order strict|log|sessions`
    pub order: pgrig_replay::replayer::OrderMode,
}

/// Takes `--compare`, `--json FILE` and `--store PATH|URL` (also `--json=FILE`) out of `args`
/// (up to a `--`); the rest is pgreplay's command line. `Err`: the message of a bad one.
fn long_options(args: &[String]) -> Result<(PgrigOpts, Vec<String>), String> {
    let mut o = PgrigOpts::default();
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a.clone());
            rest.extend(it.cloned());
            break;
        }
        if a == "--compare" {
            o.compare = true;
            continue;
        }
        if let Some(v) = a
            .strip_prefix("--order=")
            .map(str::to_string)
            .or_else(|| (a == "--order").then(|| it.next().cloned().unwrap_or_default()))
        {
            use pgrig_replay::replayer::OrderMode;
            o.order = match v.as_str() {
                "strict" => OrderMode::Strict,
                "log" => OrderMode::Log,
                "sessions" => OrderMode::Sessions,
                _ => {
                    return Err(format!(
                        "Error: option --order takes strict, log or sessions, not \"{v}\""
                    ))
                }
            };
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        let slot = match name {
            "--json" => &mut o.json,
            "--store" => &mut o.store,
            "--replayed-log" => &mut o.replayed_log,
            _ if a.starts_with("--") => return Err(format!("Error: unknown option {a}")),
            _ => {
                rest.push(a.clone());
                continue;
            }
        };
        let v = inline.or_else(|| it.next().cloned()).unwrap_or_default();
        if v.is_empty() || v == "-" {
            return Err(format!(
                "Error: option {name} needs a {}",
                if name == "--json" || name == "--replayed-log" {
                    "file name"
                } else {
                    "store (a SQLite file or a postgresql:// URL)"
                }
            ));
        }
        *slot = Some(v);
    }
    Ok((o, rest))
}

/// The checks of `pgrig replay`'s own options against pgreplay's.
fn check_pgrig(o: &Opts) -> Result<(), String> {
    let p = &o.pgrig;
    if o.parse_only && (p.compare || p.json.is_some() || p.store.is_some()) {
        return Err(
            "Error: --compare, --json and --store report a replay; -f does not replay".into(),
        );
    }
    if p.compare && o.replay_only {
        return Err(
            "Error: --compare needs the log's statement durations; a replay file (-r) has none"
                .into(),
        );
    }
    if p.replayed_log.is_some() && !p.compare {
        return Err(
            "Error: --replayed-log is the replayed side of --compare: add --compare".into(),
        );
    }
    if p.compare && o.infiles.is_empty() {
        return Err(
            "Error: --compare reads the log before replaying it: name the log file(s) instead of \
             standard input"
                .into(),
        );
    }
    Ok(())
}

/// What the command line asks for.
pub enum Parsed {
    Run(Box<Opts>),
    /// Exit now with this status (help, version or an error, already printed).
    Exit(u8),
}

pub fn help_text() -> String {
    format!(
        "\n{VERSION_LINE}\n==============\n\
\nUsage: pgreplay [<parse options>] [<replay options>] [<infile>]\n\
       pgreplay -f [<parse options>] [-o <outfile>] [<infile>]\n\
       pgreplay -r [<replay options>] [<infile>]\n\n\
 The first form parses a PostgreSQL log file and replays the\n\
statements against a database.\n\
 The second form parses a PostgreSQL log file and writes the\n\
contents to a \"replay file\" that can be replayed with -r.\n\
 The third form replays a file generated with -f.\n\n\
Parse options:\n\
   -c             (assume CSV logfile)\n\
   -b <timestamp> (start time for parsing logfile)\n\
   -e <timestamp> (end time for parsing logfile)\n\
   -q             ( \\' in string literal is a single quote)\n\n\
Replay options:\n\
   -h <hostname>\n\
   -p <port>\n\
   -W <password>  (must be the same for all users)\n\
   -s <factor>    (speed factor for replay)\n\
   -E <encoding>  (server encoding)\n\
   -j             (skip idle time during replay)\n\n\
Debugging:\n\
   -d <level>     (level between 1 and 3)\n\
   -v             (prints version and exits)\n\
\n\
pgrig additions: a jsonlog (PostgreSQL 15+) is recognised by its first character;\n\
`pgrig replay` also takes several log files (one rotated log) and\n\
   --compare           (recorded against replayed latency per statement;\n\
                        the log needs log_min_duration_statement = 0)\n\
   --replayed-log <file>  (--compare's replayed side: the replay server's own log\n\
                        with log_min_duration_statement = 0, read after the replay)\n\
   --order <mode>      (strict: earlier statements finish or wait for a lock first,\n\
                        the default; log: log order only, as pgreplay; sessions:\n\
                        each session on its own)\n\
   --json <file>       (the replay document)\n\
   --store <path|url>  (keep the replay in a results store, for pgrig report)\n"
    )
}

fn fail(msg: &str) -> Parsed {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{msg}");
    let _ = e.write_all(help_text().as_bytes());
    Parsed::Exit(1)
}

/// strtoul(s, &end, 0) accepting the whole string only.
fn strtoul(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let (t, neg) = match t.strip_prefix('-') {
        Some(r) => (r, true),
        None => (t.strip_prefix('+').unwrap_or(t), false),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()?
    } else {
        t.parse().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

const WITH_ARG: &str = "ohpWsEdbe";
const FLAGS: &str = "vfrcqj";

/// Options with their arguments, in order, and the operands.
type Split = (Vec<(char, Option<String>)>, Vec<String>);

/// Splits argv (without the program name) into (option, argument) pairs and operands; the
/// error is the option letter that is unknown or lacks its argument.
fn getopt(args: &[String]) -> Result<Split, char> {
    let (mut opts, mut operands) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if !a.starts_with('-') || a.len() == 1 {
            operands.push(a.clone());
            continue;
        }
        let chars: Vec<char> = a[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            j += 1;
            if WITH_ARG.contains(c) {
                let rest: String = chars[j..].iter().collect();
                let val = if !rest.is_empty() {
                    rest
                } else if i < args.len() {
                    i += 1;
                    args[i - 1].clone()
                } else {
                    return Err(c);
                };
                opts.push((c, Some(val)));
                break;
            } else if FLAGS.contains(c) {
                opts.push((c, None));
            } else {
                return Err(c);
            }
        }
    }
    Ok((opts, operands))
}

/// Parses pgreplay's command line; `several` accepts more than one input file (`pgrig replay`).
pub fn parse(args: &[String], several: bool) -> Parsed {
    let (pgrig, args) = if several {
        match long_options(args) {
            Ok(x) => x,
            Err(m) => return fail(&m),
        }
    } else {
        (PgrigOpts::default(), args.to_vec())
    };
    let (list, operands) = match getopt(&args) {
        Ok(x) => x,
        Err(c) if c == '?' || c == 'h' => {
            let _ = std::io::stdout().write_all(help_text().as_bytes());
            return Parsed::Exit(0);
        }
        Err(c) => return fail(&format!("Error: unknown option -{c}")),
    };
    let mut o = Opts {
        speed: 1.0,
        ..Opts::default()
    };
    // (a parse option was given, a replay option was given)
    let mut flags = (false, false);
    for (c, v) in list {
        if let Err(exit) = apply(&mut o, c, v, &mut flags) {
            return exit;
        }
    }
    if operands.len() > 1 && !several {
        return fail("More than one argument given");
    }
    o.infiles = operands;
    if o.parse_only && flags.1 {
        return fail("Error: cannot specify replay option with -f");
    }
    if o.replay_only && flags.0 {
        return fail("Error: cannot specify parse option with -r");
    }
    if o.outfile.is_some() && !o.parse_only {
        return fail("Error: option -o is only allowed with -f");
    }
    o.pgrig = pgrig;
    if let Err(m) = check_pgrig(&o) {
        return fail(&m);
    }
    Parsed::Run(Box::new(o))
}

fn nonempty(v: &str) -> Option<String> {
    Some(v.to_string()).filter(|s| !s.is_empty())
}

/// Applies one option; `Err` is the exit (help, version, or an error already printed).
fn apply(o: &mut Opts, c: char, v: Option<String>, flags: &mut (bool, bool)) -> Result<(), Parsed> {
    let v = v.unwrap_or_default();
    match c {
        'f' | 'r' => {
            if c == 'f' {
                o.parse_only = true
            } else {
                o.replay_only = true
            }
            if o.parse_only && o.replay_only {
                return Err(fail("Error: options -p and -r are mutually exclusive"));
            }
        }
        'o' => o.outfile = nonempty(&v),
        'h' => {
            flags.1 = true;
            o.host = nonempty(&v);
        }
        'p' => {
            flags.1 = true;
            let Some(n) = strtoul(&v).filter(|_| !v.is_empty()) else {
                return Err(fail(&format!("Not a valid port number: \"{v}\"")));
            };
            if !(1..=65535).contains(&n) {
                return Err(fail("Port number must be between 1 and 65535"));
            }
            o.port = Some(n as u16);
        }
        'W' => {
            flags.1 = true;
            o.password = nonempty(&v);
        }
        's' => {
            flags.1 = true;
            let Ok(f) = v.trim_start().parse::<f64>() else {
                return Err(fail(&format!("Not a valid floating point number: \"{v}\"")));
            };
            if f <= 0.0 || f.is_nan() {
                return Err(fail("Factor must be greater than 0"));
            }
            o.speed = f;
        }
        'E' => {
            flags.1 = true;
            o.encoding = nonempty(&v);
        }
        'd' => {
            let Some(n) = strtoul(&v).filter(|_| !v.is_empty()) else {
                return Err(fail(&format!("Not a valid debug level: \"{v}\"")));
            };
            if n > 3 {
                return Err(fail("Debug level must be between 0 and 3"));
            }
            o.debug = n as u8;
        }
        'v' => {
            println!("{VERSION_LINE}");
            return Err(Parsed::Exit(0));
        }
        'c' => {
            flags.0 = true;
            o.csv = true;
        }
        'b' | 'e' => {
            flags.0 = true;
            if let Err(e) = parse_time(v.as_bytes()) {
                let which = if c == 'b' { "begin" } else { "end" };
                return Err(fail(&format!("Error in {which} timestamp: {e}")));
            }
            let t: String = v.chars().take(23).collect();
            if c == 'b' {
                o.begin = Some(t)
            } else {
                o.end = Some(t)
            }
        }
        'q' => o.backslash_quote = true,
        _ => o.jump = true,
    }
    Ok(())
}
