//! The options a workload is built from: `key=value` pairs in the order given (later ones win),
//! with typed getters whose errors name the option, and a check that every key given is one the
//! workload knows (with a did-you-mean).

/// A bad or unknown option.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OptionError {
    pub message: String,
}

impl OptionError {
    pub fn new(message: impl Into<String>) -> Self {
        OptionError {
            message: message.into(),
        }
    }
}

/// Workload options, as given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    pairs: Vec<(String, String)>,
}

impl Options {
    pub fn new() -> Self {
        Options::default()
    }

    /// Adds `key=value` (`-` in keys is the same as `_`: `--table-size` = `table_size`).
    pub fn set(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.pairs.push((normalise(key), value.into()));
        self
    }

    /// The pairs as given (normalised keys).
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The last value given for `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        let key = normalise(key);
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every key must be in `known`; else an error naming the key (and the closest known one).
    pub fn check_known(&self, workload: &str, known: &[&str]) -> Result<(), OptionError> {
        for (k, _) in &self.pairs {
            if !known.iter().any(|n| normalise(n) == *k) {
                let hint = closest(k, known)
                    .map(|c| format!(" (did you mean \"{c}\"?)"))
                    .unwrap_or_default();
                return Err(OptionError::new(format!(
                    "unknown option \"{k}\" for workload {workload}{hint}"
                )));
            }
        }
        Ok(())
    }

    /// A non-negative integer option.
    pub fn u64(&self, key: &str, default: u64) -> Result<u64, OptionError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.trim().parse::<u64>().map_err(|_| {
                OptionError::new(format!(
                    "invalid value \"{v}\" for option \"{key}\": expected a non-negative integer"
                ))
            }),
        }
    }

    /// A floating-point option.
    pub fn f64(&self, key: &str, default: f64) -> Result<f64, OptionError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    OptionError::new(format!(
                        "invalid value \"{v}\" for option \"{key}\": expected a number"
                    ))
                }),
        }
    }

    /// A boolean option: on/off, true/false, yes/no, 1/0 (sysbench's spellings).
    pub fn bool(&self, key: &str, default: bool) -> Result<bool, OptionError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => match v.trim().to_ascii_lowercase().as_str() {
                "on" | "true" | "yes" | "1" => Ok(true),
                "off" | "false" | "no" | "0" => Ok(false),
                _ => Err(OptionError::new(format!(
                    "invalid value \"{v}\" for option \"{key}\": expected on or off"
                ))),
            },
        }
    }

    /// A string option.
    pub fn str<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.get(key).unwrap_or(default)
    }

    /// One of `choices`.
    pub fn choice<'a>(
        &'a self,
        key: &str,
        default: &'a str,
        choices: &[&str],
    ) -> Result<&'a str, OptionError> {
        let v = self.str(key, default);
        if choices.contains(&v) {
            Ok(v)
        } else {
            Err(OptionError::new(format!(
                "invalid value \"{v}\" for option \"{key}\": expected one of {}",
                choices.join(", ")
            )))
        }
    }
}

fn normalise(key: &str) -> String {
    key.trim_start_matches('-').replace('-', "_")
}

/// The known key closest to `key` by edit distance, when close enough to be a typo.
fn closest<'a>(key: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (pgrig_engine::error::edit_distance(key, &normalise(k)), *k))
        .filter(|(d, _)| *d <= 2.max(key.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashes_and_underscores_name_the_same_option() {
        let mut o = Options::new();
        o.set("--table-size", "100").set("table_size", "200");
        assert_eq!(o.u64("table-size", 1).unwrap(), 200);
    }

    #[test]
    fn unknown_options_suggest_the_closest() {
        let mut o = Options::new();
        o.set("tabels", "4");
        let e = o.check_known("oltp_read_write", &["tables", "table_size"]);
        assert_eq!(
            e.unwrap_err().message,
            "unknown option \"tabels\" for workload oltp_read_write (did you mean \"tables\"?)"
        );
    }

    #[test]
    fn bad_values_name_the_option() {
        let mut o = Options::new();
        o.set("threads", "x").set("skip_trx", "maybe");
        assert!(o
            .u64("threads", 1)
            .unwrap_err()
            .message
            .contains("\"threads\""));
        assert!(o.bool("skip_trx", false).is_err());
    }
}
