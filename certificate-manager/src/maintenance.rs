//! `spec.maintenanceTimeWindows`: Quartz-style cron expressions in UTC during which
//! time-driven certificate renewals may happen.
//!
//! Each expression has seconds, minutes, hours, day of month, month, day of week and an
//! optional year (`* * 0-1 ? * SUN,MON` is "every second from 00:00 to 01:59 on Sundays and
//! Mondays"). As in Quartz, day-of-week numbers run from 1 (Sunday) to 7 (Saturday), and `?`
//! means "no constraint". A moment is inside the windows when any expression matches it to
//! the second; no windows means always inside.

use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use time::OffsetDateTime;

/// Why an expression of `maintenanceTimeWindows` was refused.
#[derive(Debug, thiserror::Error)]
#[error("maintenance time window `{expression}` is not a valid cron expression: {message}")]
pub struct MaintenanceWindowError {
    /// The expression as the user wrote it.
    pub expression: String,
    /// What is wrong with it.
    pub message: String,
}

impl MaintenanceWindowError {
    /// Stable reason string for conditions, Events and metrics.
    pub fn reason(&self) -> &'static str {
        "InvalidMaintenanceTimeWindow"
    }
}

/// Parsed maintenance time windows.
#[derive(Clone, Default)]
pub struct MaintenanceWindows {
    windows: Vec<Cron>,
}

impl std::fmt::Debug for MaintenanceWindows {
    /// The cron expressions as given.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_list()
            .entries(self.windows.iter().map(Cron::as_str))
            .finish()
    }
}

impl MaintenanceWindows {
    /// Parses the expressions; the first invalid one is reported.
    pub fn parse<S: AsRef<str>>(expressions: &[S]) -> Result<Self, MaintenanceWindowError> {
        let parser = CronParser::builder()
            .seconds(Seconds::Required)
            .year(Year::Optional)
            .dom_and_dow(true)
            .alternative_weekdays(true)
            .build();
        let windows = expressions
            .iter()
            .map(|expression| {
                let expression = expression.as_ref();
                parser
                    .parse(expression)
                    .map_err(|error| MaintenanceWindowError {
                        expression: expression.to_owned(),
                        message: error.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { windows })
    }

    /// Whether `now` is inside a window (always, when there are none).
    pub fn contains(&self, now: OffsetDateTime) -> bool {
        if self.windows.is_empty() {
            return true;
        }
        let Some(now) = DateTime::<Utc>::from_timestamp(now.unix_timestamp(), 0) else {
            return false;
        };
        self.windows
            .iter()
            .any(|window| window.is_time_matching(&now).unwrap_or(false))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use time::macros::datetime;

    #[test]
    fn no_windows_always_allow() {
        let windows = MaintenanceWindows::parse::<&str>(&[]).unwrap();
        assert!(windows.contains(datetime!(2026-11-23 12:00 UTC)));
    }

    #[test]
    fn strimzi_documentation_style_window_matches_inside_and_not_outside() {
        let windows =
            MaintenanceWindows::parse(&["* * 0-1 ? * SUN,MON,TUE,WED,THU,FRI,SAT"]).unwrap();
        assert!(windows.contains(datetime!(2026-11-23 00:00 UTC)));
        assert!(windows.contains(datetime!(2026-11-23 01:59:59 UTC)));
        assert!(!windows.contains(datetime!(2026-11-23 02:00 UTC)));
        assert!(!windows.contains(datetime!(2026-11-23 23:59:59 UTC)));
    }

    #[test]
    fn quartz_day_of_week_numbers_start_on_sunday() {
        // 2026-11-22 is a Sunday, 2026-11-23 a Monday. Quartz's 1 is Sunday.
        let windows = MaintenanceWindows::parse(&["* * 8-10 ? * 1"]).unwrap();
        assert!(windows.contains(datetime!(2026-11-22 09:00 UTC)));
        assert!(!windows.contains(datetime!(2026-11-23 09:00 UTC)));
    }

    #[test]
    fn any_of_several_windows_is_enough_and_years_are_accepted() {
        let windows =
            MaintenanceWindows::parse(&["* * 8-10 * * ?", "* * 14-15 * * ? 2026"]).unwrap();
        assert!(windows.contains(datetime!(2026-11-23 14:30 UTC)));
        assert!(!windows.contains(datetime!(2027-11-23 14:30 UTC)));
        assert!(windows.contains(datetime!(2027-11-23 09:30 UTC)));
    }

    #[test]
    fn windows_print_as_their_expressions() {
        let windows =
            MaintenanceWindows::parse(&["* * 8-10 * * ?", "* * 14-15 * * ? 2026"]).unwrap();
        assert_eq!(
            format!("{windows:?}"),
            r#"["* * 8-10 * * ?", "* * 14-15 * * ? 2026"]"#
        );
    }

    #[test]
    fn invalid_expressions_name_themselves() {
        let error = MaintenanceWindows::parse(&["* * 0-1 ? * SUN", "every night"]).unwrap_err();
        assert_eq!(error.expression, "every night");
        assert!(error.to_string().contains("`every night`"), "{error}");
        assert_eq!(error.reason(), "InvalidMaintenanceTimeWindow");
        // Five fields lack Quartz's seconds.
        assert!(MaintenanceWindows::parse(&["0 1 * * *"]).is_err());
    }
}
