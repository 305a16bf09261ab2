//! `pgrig replay`'s progress bar on standard error, drawn only when standard error is a
//! terminal (as pgrig's other bars): items replayed of the total (counted before the replay
//! when the input is a file), how late the latest one was sent, and the time left.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pgrig_replay::replayer::{Progress, Tick};

/// The bar and the tick that moves it; `total`: the items to replay, when known.
pub fn start(total: Option<u64>) -> (ProgressBar, Tick) {
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr_with_hz(8));
    let template = if total.is_some() {
        "replay {bar:30} {pos}/{len} items, lag {msg}, ETA {eta}"
    } else {
        "replay {spinner} {pos} items, lag {msg}"
    };
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(lag_text(Duration::ZERO));
    let b = bar.clone();
    let tick: Tick = Box::new(move |p: Progress| {
        b.set_position(p.items);
        b.set_message(lag_text(p.lag));
    });
    (bar, tick)
}

fn lag_text(lag: Duration) -> String {
    format!("{:.3} s", lag.as_secs_f64())
}
