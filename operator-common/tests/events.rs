//! The Event publisher on a real API server: Events that say different things are all kept,
//! the same Event again is counted in its series.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, PostParams};
use kube::{Api, Resource};
use strimzi_operator_common::events::{EventPublisher, Severity};

#[tokio::test]
async fn events_with_different_notes_are_kept_and_repeats_counted() {
    let (client, namespace) = support::namespace("events").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let mut map = ConfigMap::default();
    map.metadata.name = Some("regarded".to_owned());
    let map = maps.create(&PostParams::default(), &map).await.unwrap();
    let regarding = map.object_ref(&());
    let publisher = EventPublisher::new(client.clone(), "test-operator", None);
    for note in ["Broker 2 was unregistered", "Broker 3 was unregistered"] {
        publisher
            .publish(
                &regarding,
                Severity::Normal,
                "BrokerUnregistered",
                "Unregister",
                note,
            )
            .await
            .unwrap();
    }
    for _ in 0..3 {
        publisher
            .publish(
                &regarding,
                Severity::Warning,
                "Failed",
                "Reconcile",
                "same failure",
            )
            .await
            .unwrap();
    }
    let events: Api<Event> = Api::namespaced(client, &namespace);
    // Found by their reporting controller, as Strimzi's documentation finds its operator's.
    let mut seen: Vec<(String, i32)> = events
        .list(&ListParams::default().fields("reportingController=test-operator"))
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|event| {
            (
                event.note.unwrap_or_default(),
                event.series.map_or(1, |series| series.count),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("Broker 2 was unregistered".to_owned(), 1),
            ("Broker 3 was unregistered".to_owned(), 1),
            ("same failure".to_owned(), 3),
        ]
    );
}
