//! JSON for scripts: the [`Comparison`] model as it is (field names are the interface).

use crate::model::Comparison;

pub fn render(c: &Comparison) -> String {
    serde_json::to_string_pretty(c).unwrap_or_default() + "\n"
}
