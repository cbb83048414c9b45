//! containerd's image pulls: one at a time, at registry speed, with the registry's errors.

use crate::message::{Ctx, Payload};
use crate::node::images;
use crate::node::journal::{q, Level, LogLine};
use crate::time::format_duration;

use super::{CriResponse, CriResult, Runtime, PULL_BYTES_PER_MS, PULL_LATENCY, TIMER_PULL_DONE};

impl Runtime {
    pub(super) fn start_pull(&mut self, ctx: &mut Ctx) {
        let Some(p) = self.pulls.front() else {
            self.pulling_since = None;
            return;
        };
        self.pulling_since = Some(ctx.now);
        let took = match images::resolve(&p.image) {
            Ok(size) => PULL_LATENCY + size / PULL_BYTES_PER_MS,
            Err(_) => PULL_LATENCY,
        };
        ctx.timer(took, TIMER_PULL_DONE);
    }

    pub(super) fn finish_pull(&mut self, ctx: &mut Ctx) {
        let Some(p) = self.pulls.pop_front() else {
            return;
        };
        let started = self.pulling_since.unwrap_or(ctx.now);
        let result = match images::resolve(&p.image) {
            Ok(size) => {
                let id = self.store(&p.image, size);
                let repo = p
                    .image
                    .full
                    .rsplit_once(':')
                    .map_or(p.image.full.as_str(), |(r, _)| r);
                self.log(
                    ctx.now,
                    format!(
                        "Pulled image {} with image id {}, repo tag {}, repo digest {}, size {} in {}",
                        q(&p.image.original),
                        q(&id),
                        q(&p.image.full),
                        q(&format!("{repo}@{id}")),
                        q(&size.to_string()),
                        format_duration(ctx.now - started)
                    ),
                );
                Ok(CriResult::Pulled {
                    id,
                    size,
                    took: ctx.now - started,
                    waited: ctx.now - p.queued_at,
                })
            }
            Err(e) => {
                let desc = e.split_once(" desc = ").map_or(e.as_str(), |(_, d)| d);
                self.journal.push(LogLine::logrus(
                    ctx.now,
                    Level::Error,
                    format!("PullImage {} failed", q(&p.image.original)),
                    format!("error={}", q(desc)),
                ));
                Err(e)
            }
        };
        ctx.send(p.from, Payload::CriResp(CriResponse { id: p.req, result }));
        self.start_pull(ctx);
    }
}
