//! `pgrig compare --flame A B`: a differential flame graph of two selections' stored server
//! (or client) profiles, each side's runs merged; frames are drawn as in B, coloured by how
//! their share changed from A.

use pgrig_results::profiles::stored;
use pgrig_results::Store;

use crate::error::CompareError;
use crate::{select, selector, Options};

/// The SVG comparing the stored profiles of `o.a` and `o.b` (`which`: `server` or `client`).
pub fn flame(o: &Options, which: &str) -> Result<String, CompareError> {
    let (sa, sb) = (selector::parse("A", &o.a)?, selector::parse("B", &o.b)?);
    let mut store = Store::open_existing(&o.store)?;
    let shown = pgrig_text::mask_passwords(&o.store);
    let a = side(&mut store, &shown, "A", &o.a, &sa, which)?;
    let b = side(&mut store, &shown, "B", &o.b, &sb, which)?;
    let title = format!("{which} profile: {} → {}", o.a, o.b);
    pgrig_profile::diff_svg(&a, &b, &title).map_err(|e| CompareError::Profile(e.to_string()))
}

/// One side's folded stacks, merged over its runs; a run without a profile is an error.
fn side(
    store: &mut Store,
    path: &str,
    which: &str,
    text: &str,
    sel: &selector::Selector,
    kind: &str,
) -> Result<String, CompareError> {
    let mut folded = Vec::new();
    for id in select::run_ids(store, path, sel)? {
        let doc = store.show(id)?.ok_or_else(|| CompareError::UnknownRun {
            id,
            store: path.to_string(),
        })?;
        let f = stored(&doc, kind).ok_or_else(|| {
            CompareError::Profile(format!(
                "{which} ({text}): run {id} has no {kind} profile (profile studies with \
                 `[collect] profile = true`{})",
                if kind == "client" {
                    " and `profile_client = true`"
                } else {
                    ""
                }
            ))
        })?;
        folded.push(f.to_string());
    }
    Ok(pgrig_profile::merge(folded.iter().map(String::as_str)))
}
