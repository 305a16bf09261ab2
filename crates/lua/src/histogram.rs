//! `sysbench.histogram.new(size, min, max)`: a logarithmic histogram (`update(value)`,
//! `print()`), sysbench's latency histogram (`pgrig_workloads::sysbench::histogram`) with the
//! script's size and range.

use std::sync::Mutex;

use mlua::{Lua, UserData, UserDataMethods};
use pgrig_workloads::sysbench::histogram::Slots;

/// One script histogram (the mutex lets a state's histogram be the userdata's `Send` data).
pub struct Histogram(Mutex<Slots>);

impl UserData for Histogram {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_method("update", |_, this, v: f64| {
            if let Ok(mut s) = this.0.lock() {
                s.add(v);
            }
            Ok(())
        });
        m.add_method("print", |_, this, ()| {
            if let Ok(s) = this.0.lock() {
                print!("{}", s.render());
            }
            Ok(())
        });
    }
}

/// The `new` function.
pub fn constructor(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|_, (size, min, max): (f64, f64, f64)| {
        if !(1.0..=1e6).contains(&size) {
            return Err(mlua::Error::RuntimeError(format!(
                "sysbench.histogram.new: size must be 1 to 1000000, got {size}"
            )));
        }
        Ok(Histogram(Mutex::new(Slots::with_range(
            size as usize,
            min,
            max,
        ))))
    })
}
