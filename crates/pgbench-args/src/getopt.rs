//! A small emulation of GNU `getopt_long` (glibc 2.26+), reproducing exactly what pgbench's
//! option parsing accepts and complains about:
//!
//! * argument permutation: options and non-options may be interleaved; non-options are collected
//!   in order (`POSIXLY_CORRECT` disables this: the first non-option ends the options);
//! * `--` ends the options, `-` alone is a non-option;
//! * short options may be clustered (`-nS`) and take their value glued (`-c4`) or from the next
//!   argument (`-c 4`, even if that argument starts with `-`);
//! * long options take `--opt=value` or `--opt value`, and may be abbreviated to any unique
//!   prefix; an exact name always wins over a prefix match;
//! * getopt's own diagnostics, prefixed with the full `argv[0]`.
//!
//! Besides the getopt table, a second table of *extra* long options can be given: they are only
//! consulted when no regular option matches, so they never change how the regular options are
//! abbreviated or reported as ambiguous.

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    No,
    Required,
    /// Takes the next argument as its value only when that is a word (not an option, not the
    /// end of the line); otherwise the option has no value. pgbench's `-d`: `--debug` in 15/16,
    /// `--dbname DBNAME` in 17+ (see `options.rs`).
    WordOrNone,
}

/// A short option character (the `"c:"` part of an optstring).
#[derive(Clone, Copy, Debug)]
pub struct ShortOpt<T> {
    pub ch: char,
    pub has_arg: HasArg,
    pub id: T,
}

/// A `struct option` entry.
#[derive(Clone, Copy, Debug)]
pub struct LongOpt<T> {
    pub name: &'static str,
    pub has_arg: HasArg,
    pub id: T,
}

/// The option tables.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a, T> {
    pub short: &'a [ShortOpt<T>],
    pub long: &'a [LongOpt<T>],
    /// Long options matched only when nothing in `long` matches (exactly or by prefix).
    pub extra_long: &'a [LongOpt<T>],
}

/// One step of the option scan.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<T> {
    /// A recognised option and its value (for options that take one).
    Opt { id: T, arg: Option<String> },
    /// getopt's complaint (a full stderr line, starting with `argv[0]`).
    Error(String),
}

/// Iterator over the options of an argument vector; non-options are collected on the side.
pub struct Getopt<'a, T> {
    spec: Spec<'a, T>,
    argv0: &'a str,
    args: &'a [String],
    /// Index of the next argument to look at.
    next: usize,
    /// Inside a short-option cluster: (argument index, byte offset of the next char).
    cluster: Option<(usize, usize)>,
    positionals: Vec<String>,
    posixly_correct: bool,
}

impl<'a, T: Copy> Getopt<'a, T> {
    /// `args` are the arguments after `argv[0]`; `argv0` prefixes getopt's messages.
    pub fn new(
        spec: Spec<'a, T>,
        argv0: &'a str,
        args: &'a [String],
        posixly_correct: bool,
    ) -> Self {
        Getopt {
            spec,
            argv0,
            args,
            next: 0,
            cluster: None,
            positionals: Vec::new(),
            posixly_correct,
        }
    }

    /// The non-option arguments, in command-line order. Complete once the iterator returned `None`.
    pub fn positionals(&self) -> &[String] {
        &self.positionals
    }

    fn short_opt(&mut self, idx: usize, pos: usize) -> Event<T> {
        let arg = &self.args[idx];
        // `pos` always sits on a char boundary: it starts at 1 (after the ASCII '-') and
        // advances by whole chars.
        let ch = arg[pos..].chars().next().unwrap_or('?');
        let after = pos + ch.len_utf8();
        let rest_empty = after >= arg.len();
        self.cluster = if rest_empty { None } else { Some((idx, after)) };
        if rest_empty {
            self.next = idx + 1;
        }
        // glibc treats ':' and ';' as invalid even though they appear in optstrings.
        let found = self
            .spec
            .short
            .iter()
            .find(|o| o.ch == ch && ch != ':' && ch != ';');
        let Some(opt) = found else {
            return Event::Error(format!("{}: invalid option -- '{}'", self.argv0, ch));
        };
        match opt.has_arg {
            HasArg::No => Event::Opt {
                id: opt.id,
                arg: None,
            },
            HasArg::Required | HasArg::WordOrNone => {
                if !rest_empty {
                    self.cluster = None;
                    self.next = idx + 1;
                    return Event::Opt {
                        id: opt.id,
                        arg: Some(arg[after..].to_string()),
                    };
                }
                let next = self.args.get(self.next);
                let is_word = |v: &String| v == "-" || !v.starts_with('-');
                if opt.has_arg == HasArg::WordOrNone && !next.is_some_and(is_word) {
                    return Event::Opt {
                        id: opt.id,
                        arg: None,
                    };
                }
                if let Some(value) = next {
                    self.next += 1;
                    Event::Opt {
                        id: opt.id,
                        arg: Some(value.clone()),
                    }
                } else {
                    Event::Error(format!(
                        "{}: option requires an argument -- '{}'",
                        self.argv0, ch
                    ))
                }
            }
        }
    }

    fn long_opt(&mut self, idx: usize) -> Event<T> {
        self.next = idx + 1;
        let text = &self.args[idx][2..];
        let (name, value) = match text.find('=') {
            Some(eq) => (&text[..eq], Some(&text[eq + 1..])),
            None => (text, None),
        };
        let opt = match find_long(self.spec.long, name) {
            Match::Found(opt) => opt,
            Match::Ambiguous(names) => return self.ambiguous(text, &names),
            Match::None => match find_long(self.spec.extra_long, name) {
                Match::Found(opt) => opt,
                Match::Ambiguous(names) => return self.ambiguous(text, &names),
                Match::None => {
                    return Event::Error(format!(
                        "{}: unrecognized option '--{}'",
                        self.argv0, text
                    ))
                }
            },
        };
        match (opt.has_arg, value) {
            (HasArg::No, None) => Event::Opt {
                id: opt.id,
                arg: None,
            },
            (HasArg::No, Some(_)) => Event::Error(format!(
                "{}: option '--{}' doesn't allow an argument",
                self.argv0, opt.name
            )),
            (HasArg::Required | HasArg::WordOrNone, Some(v)) => Event::Opt {
                id: opt.id,
                arg: Some(v.to_string()),
            },
            (HasArg::Required | HasArg::WordOrNone, None) => {
                if let Some(v) = self.args.get(self.next) {
                    self.next += 1;
                    Event::Opt {
                        id: opt.id,
                        arg: Some(v.clone()),
                    }
                } else {
                    Event::Error(format!(
                        "{}: option '--{}' requires an argument",
                        self.argv0, opt.name
                    ))
                }
            }
        }
    }

    fn ambiguous(&self, text: &str, names: &[&str]) -> Event<T> {
        let mut line = format!(
            "{}: option '--{}' is ambiguous; possibilities:",
            self.argv0, text
        );
        for n in names {
            line.push_str(&format!(" '--{n}'"));
        }
        Event::Error(line)
    }
}

enum Match<T> {
    Found(LongOpt<T>),
    Ambiguous(Vec<&'static str>),
    None,
}

/// Exact name first, then unique prefix (in table order), like glibc's `process_long_option`.
fn find_long<T: Copy>(table: &[LongOpt<T>], name: &str) -> Match<T> {
    if let Some(opt) = table.iter().find(|o| o.name == name) {
        return Match::Found(*opt);
    }
    let matches: Vec<&LongOpt<T>> = table.iter().filter(|o| o.name.starts_with(name)).collect();
    match matches.len() {
        0 => Match::None,
        1 => Match::Found(*matches[0]),
        _ => Match::Ambiguous(matches.iter().map(|o| o.name).collect()),
    }
}

impl<T: Copy> Iterator for Getopt<'_, T> {
    type Item = Event<T>;

    fn next(&mut self) -> Option<Event<T>> {
        if let Some((idx, pos)) = self.cluster {
            return Some(self.short_opt(idx, pos));
        }
        while self.next < self.args.len() {
            let idx = self.next;
            let arg = &self.args[idx];
            if arg == "--" {
                self.positionals
                    .extend(self.args[idx + 1..].iter().cloned());
                self.next = self.args.len();
                return None;
            }
            if arg.len() < 2 || !arg.starts_with('-') {
                if self.posixly_correct {
                    self.positionals.extend(self.args[idx..].iter().cloned());
                    self.next = self.args.len();
                    return None;
                }
                self.positionals.push(arg.clone());
                self.next += 1;
                continue;
            }
            if arg.starts_with("--") {
                return Some(self.long_opt(idx));
            }
            return Some(self.short_opt(idx, 1));
        }
        None
    }
}
