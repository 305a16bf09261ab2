//! Reading a worker's JSON result (`codec`, `lua_codec`): each field or element typed and
//! checked, a damaged one an error naming it with (at most 40 characters of) what was there.

use serde_json::Value;

use crate::FleetError;

pub(crate) fn bad(what: &str) -> FleetError {
    FleetError::new(format!("a worker's result is damaged: {what}"))
}

/// A JSON value as shown in a message (at most 40 characters).
pub(crate) fn shown(v: Option<&Value>) -> String {
    let text = v.map_or("nothing".to_string(), Value::to_string);
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Element `i` of `v`: a finite number.
pub(crate) fn f_at(v: &Value, i: usize, what: &str) -> Result<f64, FleetError> {
    let x = v.get(i);
    x.and_then(Value::as_f64)
        .filter(|x| x.is_finite())
        .ok_or_else(|| bad(&format!("{what}[{i}] is not a number: {}", shown(x))))
}

/// Element `i` of `v`: a non-negative integer.
pub(crate) fn u_at(v: &Value, i: usize, what: &str) -> Result<u64, FleetError> {
    let x = v.get(i);
    x.and_then(Value::as_u64)
        .ok_or_else(|| bad(&format!("{what}[{i}] is not a count: {}", shown(x))))
}

/// Field `k` of `v`: a finite number.
pub(crate) fn num(v: &Value, k: &str) -> Result<f64, FleetError> {
    (v[k].as_f64().filter(|x| x.is_finite()))
        .ok_or_else(|| bad(&format!("{k} is not a number: {}", shown(v.get(k)))))
}

/// Field `k` of `v`: a non-negative integer.
pub(crate) fn count(v: &Value, k: &str) -> Result<u64, FleetError> {
    (v[k].as_u64()).ok_or_else(|| bad(&format!("{k} is not a count: {}", shown(v.get(k)))))
}

/// Field `k` of `v`: true or false.
#[cfg(feature = "lua")]
pub(crate) fn flag(v: &Value, k: &str) -> Result<bool, FleetError> {
    (v[k].as_bool()).ok_or_else(|| bad(&format!("{k} is not true or false: {}", shown(v.get(k)))))
}

/// Field `k` of `v`: a list.
pub(crate) fn list<'a>(v: &'a Value, k: &str) -> Result<&'a Vec<Value>, FleetError> {
    (v[k].as_array()).ok_or_else(|| bad(&format!("{k} is not a list: {}", shown(v.get(k)))))
}
