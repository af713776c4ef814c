//! The CEL rules and the leniency of our CRDs on a real API server (the test environment's,
//! with our CRDs installed): every rule's valid documents are accepted and its invalid ones
//! refused with its message, and documents that Strimzi's CRDs accept are accepted. The same
//! documents are evaluated without a server in `tests/rules.rs`.

// Test code: a panic with its message is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kube::Client;
use kube::api::{Api, DynamicObject, GroupVersionKind};
use kube::discovery::pinned_kind;
use serde_json::Value;
use strimzi_tests::environment::TestEnv;
use support::{accepted_as_by_strimzi, cases};

/// Creates `document` as `name` in `namespace`, returning the API server's refusal.
async fn create(
    client: &Client,
    namespace: &str,
    name: &str,
    document: &Value,
) -> Result<(), String> {
    let mut document = document.clone();
    document["metadata"]["name"] = Value::String(name.to_owned());
    strimzi_tests::resources::create_document(client, namespace, &document).await
}

#[tokio::test]
async fn every_rule_accepts_valid_and_refuses_invalid_documents() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("rules").await;
    let (mut accepted, mut refused, mut wrong) = (0, 0, Vec::new());
    for (number, case) in cases().iter().enumerate() {
        let rule = case.rule;
        let what = format!("{} {}: `{}`", rule.kind, rule.path, rule.message);
        for (index, document) in case.valid.iter().enumerate() {
            let name = format!("valid-{number}-{index}");
            match create(&client, &namespace, &name, document).await {
                Ok(()) => accepted += 1,
                Err(message) => wrong.push(format!("{what}: refused {document}: {message}")),
            }
        }
        let invalid = case
            .invalid
            .iter()
            .map(|document| (document, vec![rule.message]));
        // A rule that cannot be evaluated is reported with the evaluation error, followed by
        // the rule's message.
        let unevaluable = case.unevaluable.iter().map(|document| {
            (
                document,
                vec!["no such key", "evaluating rule", rule.message],
            )
        });
        for (index, (document, expected)) in invalid.chain(unevaluable).enumerate() {
            let name = format!("invalid-{number}-{index}");
            match create(&client, &namespace, &name, document).await {
                Ok(()) => wrong.push(format!("{what}: accepted {document}")),
                Err(message) if expected.iter().all(|part| message.contains(part)) => {
                    refused += 1;
                }
                Err(message) => wrong.push(format!(
                    "{what}: refused {document} without {expected:?}: {message}"
                )),
            }
        }
    }
    println!("{accepted} valid documents accepted, {refused} invalid ones refused");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test]
async fn what_strimzis_crds_accept_is_accepted() {
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("lenient").await;
    let mut refused = Vec::new();
    for (index, (what, document)) in accepted_as_by_strimzi().iter().enumerate() {
        if let Err(message) = create(&client, &namespace, &format!("doc-{index}"), document).await {
            refused.push(format!("{what}: {message}"));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

#[tokio::test]
async fn a_status_may_hold_several_warning_conditions() {
    use kube::api::{Patch, PatchParams};
    let env = TestEnv::shared();
    let client = env.client().await;
    let namespace = env.namespace("conditions").await;
    let document = serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaUser",
        "metadata": {"labels": {"strimzi.io/cluster": "c"}},
        "spec": {}
    });
    create(&client, &namespace, "warned", &document)
        .await
        .unwrap();
    let gvk = GroupVersionKind::gvk("kafka.strimzi.io", "v1", "KafkaUser");
    let (resource, _) = pinned_kind(&client, &gvk).await.unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
    let warning = |reason: &str| {
        serde_json::json!({"type": "Warning", "status": "True", "reason": reason,
                           "message": reason, "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    let status = serde_json::json!({
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "KafkaUser",
        "status": {"conditions": [warning("First"), warning("Second")]}
    });
    api.patch_status(
        "warned",
        &PatchParams::apply("crd-tests").force(),
        &Patch::Apply(&status),
    )
    .await
    .expect("two Warning conditions are accepted, as by Strimzi's CRDs");
    let written = api.get("warned").await.unwrap();
    let reasons: Vec<&str> = written.data["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|condition| condition["reason"].as_str())
        .collect();
    assert_eq!(reasons, ["First", "Second"]);
}
