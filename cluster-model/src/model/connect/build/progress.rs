//! What a reconciliation of a built Connect cluster does next, from what it reads: the
//! StrimziPodSet's record of the last build it runs (`strimzi.io/connect-build-revision`,
//! `strimzi.io/connect-build-image`, and the user's `strimzi.io/force-rebuild`) and the
//! builder pod, if there is one. Pure: the controller reads, [`next_step`] decides, the
//! controller acts and looks again when the pod changes.
//!
//! A build runs only when its revision differs from the recorded one or a rebuild is forced;
//! the workers keep the recorded image meanwhile, and switch (by digest) once the pod has
//! pushed. A finished pod is removed once its image is recorded; a failed one is kept (its
//! log tells why) and tried again after `retry_after`, at once when the build changes, a
//! rebuild is forced or the user deletes the pod.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt;
use strimzi_api::annotations;

/// `strimzi.io/connect-build-image`: the image the last build pushed, by digest, on the
/// StrimziPodSet.
pub const CONNECT_BUILD_IMAGE: &str = "strimzi.io/connect-build-image";

/// The last build the StrimziPodSet records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordedBuild {
    /// Its revision.
    pub revision: Option<String>,
    /// The image it pushed.
    pub image: Option<String>,
    /// Whether the user asks for a rebuild (`strimzi.io/force-rebuild: "true"`).
    pub force_rebuild: bool,
}

impl RecordedBuild {
    /// The record on a StrimziPodSet's `annotations`.
    pub fn from_annotations(annotations: &std::collections::BTreeMap<String, String>) -> Self {
        Self {
            revision: annotations
                .get(annotations::CONNECT_BUILD_REVISION)
                .cloned(),
            image: annotations.get(CONNECT_BUILD_IMAGE).cloned(),
            force_rebuild: annotations
                .get(annotations::FORCE_REBUILD)
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("true")),
        }
    }
}

/// Where a builder pod is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuilderState {
    /// Not finished (pending, pulling, building, pushing), for this long since it was created.
    Running {
        /// Time since the pod was created.
        for_: Duration,
    },
    /// Pushed: the image with its digest, from the termination message.
    Succeeded {
        /// The pushed image, `<name>@sha256:<digest>`.
        image: String,
    },
    /// Failed, with what the pod tells.
    Failed {
        /// The exit code and termination message, or the pod's reason.
        message: String,
        /// Time since it ended.
        ago: Duration,
    },
    /// Being deleted.
    Deleting,
}

/// The builder pod as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Builder {
    /// The revision it builds.
    pub revision: Option<String>,
    /// Where it is.
    pub state: BuilderState,
}

impl Builder {
    /// The builder `pod`, its container `container`, at `now`.
    pub fn from_pod(pod: &Pod, container: &str, now: jiff::Timestamp) -> Self {
        let revision = pod
            .annotations()
            .get(annotations::CONNECT_BUILD_REVISION)
            .cloned();
        let since = |time: Option<&Time>| {
            time.map_or(Duration::ZERO, |time| {
                let nanos = now.as_nanosecond() - time.0.as_nanosecond();
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(0))
            })
        };
        let state = if pod.metadata.deletion_timestamp.is_some() {
            BuilderState::Deleting
        } else {
            let status = pod.status.as_ref();
            let terminated = status
                .and_then(|status| status.container_statuses.as_ref())
                .into_iter()
                .flatten()
                .find(|status| status.name == container)
                .and_then(|status| status.state.as_ref())
                .and_then(|state| state.terminated.as_ref());
            let phase = status.and_then(|status| status.phase.as_deref());
            match (phase, terminated) {
                (Some("Succeeded"), Some(terminated)) if terminated.exit_code == 0 => {
                    match terminated
                        .message
                        .as_deref()
                        .map(str::trim)
                        .filter(|m| !m.is_empty())
                    {
                        Some(image) => BuilderState::Succeeded {
                            image: image.to_owned(),
                        },
                        None => BuilderState::Failed {
                            message: "the build finished, but the builder wrote no image to its \
                                      termination log"
                                .to_owned(),
                            ago: since(terminated.finished_at.as_ref()),
                        },
                    }
                }
                (Some("Succeeded" | "Failed"), Some(terminated)) => BuilderState::Failed {
                    message: format!(
                        "the builder exited with code {}{}",
                        terminated.exit_code,
                        terminated
                            .message
                            .as_deref()
                            .map(str::trim)
                            .filter(|message| !message.is_empty())
                            .or(terminated.reason.as_deref())
                            .map(|message| format!(": {message}"))
                            .unwrap_or_default()
                    ),
                    ago: since(terminated.finished_at.as_ref()),
                },
                (Some("Failed"), None) => BuilderState::Failed {
                    message: status
                        .and_then(|status| status.message.clone().or(status.reason.clone()))
                        .unwrap_or_else(|| "the builder pod failed".to_owned()),
                    ago: Duration::ZERO,
                },
                _ => BuilderState::Running {
                    for_: since(pod.metadata.creation_timestamp.as_ref()),
                },
            }
        };
        Self { revision, state }
    }
}

/// What to do next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildStep {
    /// Nothing to build: the workers run `image`; a builder pod left over goes.
    Current {
        /// The recorded image.
        image: String,
        /// Whether a builder pod is to be deleted.
        remove_builder: bool,
    },
    /// Start a build (the Dockerfile ConfigMap and the ServiceAccount applied first); for a
    /// forced one, the force annotation is removed once the pod is created.
    Start {
        /// Whether the rebuild was forced.
        forced: bool,
    },
    /// Delete the builder pod (another revision, a forced rebuild, a failure due for a
    /// retry); a new one starts once it is gone.
    Replace,
    /// Wait for the builder pod being deleted.
    WaitForRemoval,
    /// The build runs; `overdue` once it runs longer than the timeout.
    Running {
        /// Whether it runs longer than the timeout.
        overdue: bool,
    },
    /// The build pushed `image`: record it, roll the workers onto it, delete the pod.
    Succeeded {
        /// The pushed image by digest.
        image: String,
    },
    /// The build failed; tried again in `retry_in`.
    Failed {
        /// What the builder told.
        message: String,
        /// When it is tried again.
        retry_in: Duration,
    },
}

/// The next step of the build of `revision`, given the podset's `recorded` build and the
/// `builder` pod; a build runs at most `timeout` before it is reported, a failed one is
/// tried again `retry_after` after it ended.
pub fn next_step(
    revision: &str,
    recorded: &RecordedBuild,
    builder: Option<&Builder>,
    timeout: Duration,
    retry_after: Duration,
) -> BuildStep {
    let current = (recorded.revision.as_deref() == Some(revision) && !recorded.force_rebuild)
        .then_some(recorded.image.as_ref())
        .flatten();
    match builder {
        Some(Builder {
            state: BuilderState::Deleting,
            ..
        }) => BuildStep::WaitForRemoval,
        Some(builder)
            if builder.revision.as_deref() == Some(revision) && !recorded.force_rebuild =>
        {
            match &builder.state {
                BuilderState::Running { for_ } => BuildStep::Running {
                    overdue: *for_ > timeout,
                },
                BuilderState::Succeeded { image } => BuildStep::Succeeded {
                    image: image.clone(),
                },
                BuilderState::Failed { message, ago } => match retry_after.checked_sub(*ago) {
                    Some(retry_in) if !retry_in.is_zero() => BuildStep::Failed {
                        message: message.clone(),
                        retry_in,
                    },
                    _ => BuildStep::Replace,
                },
                BuilderState::Deleting => BuildStep::WaitForRemoval,
            }
        }
        Some(_) => match current {
            Some(image) => BuildStep::Current {
                image: image.clone(),
                remove_builder: true,
            },
            None => BuildStep::Replace,
        },
        None => match current {
            Some(image) => BuildStep::Current {
                image: image.clone(),
                remove_builder: false,
            },
            None => BuildStep::Start {
                forced: recorded.force_rebuild,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(300);
    const RETRY: Duration = Duration::from_secs(120);

    fn recorded(revision: Option<&str>, image: Option<&str>, force: bool) -> RecordedBuild {
        RecordedBuild {
            revision: revision.map(str::to_owned),
            image: image.map(str::to_owned),
            force_rebuild: force,
        }
    }

    fn builder(revision: &str, state: BuilderState) -> Builder {
        Builder {
            revision: Some(revision.to_owned()),
            state,
        }
    }

    fn running(seconds: u64) -> BuilderState {
        BuilderState::Running {
            for_: Duration::from_secs(seconds),
        }
    }

    #[test]
    fn the_first_build_starts_and_its_pod_is_followed_to_the_pushed_image() {
        let none = recorded(None, None, false);
        assert_eq!(
            next_step("r1", &none, None, TIMEOUT, RETRY),
            BuildStep::Start { forced: false }
        );
        assert_eq!(
            next_step(
                "r1",
                &none,
                Some(&builder("r1", running(10))),
                TIMEOUT,
                RETRY
            ),
            BuildStep::Running { overdue: false }
        );
        assert_eq!(
            next_step(
                "r1",
                &none,
                Some(&builder("r1", running(301))),
                TIMEOUT,
                RETRY
            ),
            BuildStep::Running { overdue: true }
        );
        let pushed = BuilderState::Succeeded {
            image: "reg/connect@sha256:1".to_owned(),
        };
        assert_eq!(
            next_step("r1", &none, Some(&builder("r1", pushed)), TIMEOUT, RETRY),
            BuildStep::Succeeded {
                image: "reg/connect@sha256:1".to_owned()
            }
        );
    }

    #[test]
    fn an_unchanged_build_is_not_built_again_and_a_leftover_pod_goes() {
        let built = recorded(Some("r1"), Some("reg/connect@sha256:1"), false);
        let current = |remove_builder| BuildStep::Current {
            image: "reg/connect@sha256:1".to_owned(),
            remove_builder,
        };
        assert_eq!(
            next_step("r1", &built, None, TIMEOUT, RETRY),
            current(false)
        );
        assert_eq!(
            next_step(
                "r1",
                &built,
                Some(&builder("r0", running(1))),
                TIMEOUT,
                RETRY
            ),
            current(true)
        );
        // Recorded without its image (an interrupted write): built again.
        let no_image = recorded(Some("r1"), None, false);
        assert_eq!(
            next_step("r1", &no_image, None, TIMEOUT, RETRY),
            BuildStep::Start { forced: false }
        );
    }

    #[test]
    fn a_changed_build_replaces_a_running_builder_of_the_old_revision() {
        let built = recorded(Some("r1"), Some("reg/connect@sha256:1"), false);
        assert_eq!(
            next_step(
                "r2",
                &built,
                Some(&builder("r1", running(5))),
                TIMEOUT,
                RETRY
            ),
            BuildStep::Replace
        );
        assert_eq!(
            next_step("r2", &built, None, TIMEOUT, RETRY),
            BuildStep::Start { forced: false }
        );
        let deleting = builder("r1", BuilderState::Deleting);
        assert_eq!(
            next_step("r2", &built, Some(&deleting), TIMEOUT, RETRY),
            BuildStep::WaitForRemoval
        );
    }

    #[test]
    fn a_forced_rebuild_restarts_once() {
        let forced = recorded(Some("r1"), Some("reg/connect@sha256:1"), true);
        assert_eq!(
            next_step("r1", &forced, None, TIMEOUT, RETRY),
            BuildStep::Start { forced: true }
        );
        // A build of the same revision already running is started again for the request.
        assert_eq!(
            next_step(
                "r1",
                &forced,
                Some(&builder("r1", running(5))),
                TIMEOUT,
                RETRY
            ),
            BuildStep::Replace
        );
        // Once the forced pod runs, the annotation is gone: it is followed, not replaced.
        let after = recorded(Some("r1"), Some("reg/connect@sha256:1"), false);
        assert_eq!(
            next_step(
                "r1",
                &after,
                Some(&builder("r1", running(5))),
                TIMEOUT,
                RETRY
            ),
            BuildStep::Running { overdue: false }
        );
        let pushed = BuilderState::Succeeded {
            image: "reg/connect@sha256:2".to_owned(),
        };
        assert_eq!(
            next_step("r1", &after, Some(&builder("r1", pushed)), TIMEOUT, RETRY),
            BuildStep::Succeeded {
                image: "reg/connect@sha256:2".to_owned()
            }
        );
    }

    #[test]
    fn a_failed_build_is_reported_then_tried_again() {
        let none = recorded(None, None, false);
        let failed = |ago| {
            builder(
                "r1",
                BuilderState::Failed {
                    message: "the builder exited with code 1".to_owned(),
                    ago: Duration::from_secs(ago),
                },
            )
        };
        assert_eq!(
            next_step("r1", &none, Some(&failed(20)), TIMEOUT, RETRY),
            BuildStep::Failed {
                message: "the builder exited with code 1".to_owned(),
                retry_in: Duration::from_secs(100)
            }
        );
        assert_eq!(
            next_step("r1", &none, Some(&failed(120)), TIMEOUT, RETRY),
            BuildStep::Replace
        );
        // A fix (another revision) replaces it at once.
        assert_eq!(
            next_step("r2", &none, Some(&failed(1)), TIMEOUT, RETRY),
            BuildStep::Replace
        );
    }
}
