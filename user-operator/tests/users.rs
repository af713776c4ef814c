//! The user operator against the real API server and the real Kafka broker (SCRAM and mutual
//! TLS listeners, the standard authorizer): each behaviour driven through KafkaUser
//! resources and checked in Kafka with the admin client and with rdkafka clients that
//! authenticate as the users.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::json;
use strimzi_operator_common::kafka::{
    AclOperation, AclResourceType, KafkaAdmin, ScramCredentialChange,
};
use support::*;

fn topic_acl(topic: &str, operations: &[&str]) -> serde_json::Value {
    json!({"resource": {"type": "topic", "name": topic}, "operations": operations})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_user_connects_with_its_secret_and_its_acls_allow_exactly_what_they_say() {
    let scope = Scope::new("uo-tls").await;
    let operator = Operator::on(&scope, &[]);
    let admin = admin();
    let user = scope.user("alice");
    let allowed = format!("{}.allowed", scope.namespace);
    let other = format!("{}.other", scope.namespace);
    create_topic(&admin, &allowed).await;
    create_topic(&admin, &other).await;
    scope
        .create_user(
            &user,
            json!({
                "authentication": {"type": "tls"},
                "authorization": {"type": "simple", "acls": [
                    topic_acl(&allowed, &["Write", "Describe"])]}
            }),
        )
        .await;
    scope.users().wait_ready(&user).await;
    let status = scope.users().status(&user).await;
    assert_eq!(status["username"], format!("CN={user}"));
    assert_eq!(status["secret"], user.as_str());

    let secret = scope.secret(&user).await.unwrap();
    let data = secret.data.clone().unwrap();
    for key in [
        "ca.crt",
        "user.crt",
        "user.key",
        "user.p12",
        "user.password",
    ] {
        assert!(data.contains_key(key), "the Secret has {key}");
    }
    let labels = secret.metadata.labels.unwrap();
    assert_eq!(labels["strimzi.io/kind"], "KafkaUser");
    assert_eq!(labels["strimzi.io/cluster"], "my-cluster");
    assert_eq!(
        labels["app.kubernetes.io/managed-by"],
        "strimzi-user-operator"
    );
    assert_eq!(secret.metadata.owner_references.unwrap()[0].name, user);
    assert_eq!(
        scope.secret_text(&user, "ca.crt").await,
        env().kafka().ca_pem()
    );

    // Java opens the PKCS#12 store with the password next to it.
    let store = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(store.path(), &data["user.p12"].0).unwrap();
    let listed = Command::new("keytool")
        .args(["-list", "-storetype", "PKCS12", "-keystore"])
        .arg(store.path())
        .args([
            "-storepass",
            &scope.secret_text(&user, "user.password").await,
        ])
        .output()
        .expect("keytool runs (it comes with the JDK the Kafka broker needs)");
    assert!(
        listed.status.success(),
        "keytool: {}",
        String::from_utf8_lossy(&listed.stderr)
    );
    assert!(String::from_utf8_lossy(&listed.stdout).contains("PrivateKeyEntry"));

    // The ACL binding in Kafka is exactly the rule's.
    let bindings = acls(&admin, &format!("CN={user}")).await;
    assert_eq!(bindings.len(), 2, "{bindings:?}");
    assert!(
        bindings
            .iter()
            .all(|binding| binding.resource_name == allowed)
    );

    let identity = Identity::Certificate {
        cert: scope.secret_text(&user, "user.crt").await,
        key: scope.secret_text(&user, "user.key").await,
    };
    wait_produce(&identity, &allowed).await;
    let denied = produce(&identity, &other).await.unwrap_err();
    assert!(denied.contains("uthorization"), "{denied}");
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scram_user_uses_its_password_a_chosen_one_and_a_changed_one() {
    let scope = Scope::new("uo-scram").await;
    let operator = Operator::on(&scope, &[]);
    let admin = admin();
    let topic = format!("{}.t", scope.namespace);
    create_topic(&admin, &topic).await;
    let generated = scope.user("gen");
    let chosen = scope.user("chosen");
    let rules = json!({"type": "simple", "acls": [topic_acl(&topic, &["Write", "Describe"])]});
    scope
        .create_user(
            &generated,
            json!({"authentication": {"type": "scram-sha-512"}, "authorization": rules}),
        )
        .await;
    scope
        .create_secret("chosen-password", &[("pw", "first-Password1")])
        .await;
    scope
        .create_user(
            &chosen,
            json!({"authentication": {"type": "scram-sha-512", "password": {"valueFrom":
                    {"secretKeyRef": {"name": "chosen-password", "key": "pw"}}}},
                   "authorization": rules}),
        )
        .await;
    scope.users().wait_ready(&generated).await;
    scope.users().wait_ready(&chosen).await;

    let password = scope.secret_text(&generated, "password").await;
    assert_eq!(password.len(), 32);
    let jaas = scope.secret_text(&generated, "sasl.jaas.config").await;
    assert!(jaas.contains(&format!("username=\"{generated}\" password=\"{password}\"")));
    assert_eq!(
        scope.users().status(&generated).await["username"],
        generated.as_str()
    );
    assert!(has_scram(&admin, &generated).await);
    wait_produce(
        &Identity::Scram {
            user: generated.clone(),
            password: password.clone(),
        },
        &topic,
    )
    .await;
    // A wrong password never gets a record through (librdkafka retries the authentication
    // until the record times out).
    let wrong = produce(
        &Identity::Scram {
            user: generated.clone(),
            password: "not-the-password".to_owned(),
        },
        &topic,
    )
    .await;
    assert!(wrong.is_err(), "a wrong password is refused");

    assert_eq!(
        scope.secret_text(&chosen, "password").await,
        "first-Password1"
    );
    wait_produce(
        &Identity::Scram {
            user: chosen.clone(),
            password: "first-Password1".to_owned(),
        },
        &topic,
    )
    .await;
    // A changed password in the referenced Secret is picked up by the next reconciliation
    // (here: the next touch of the KafkaUser) and set in Kafka.
    scope
        .create_secret("chosen-password", &[("pw", "second-Password2")])
        .await;
    scope
        .users()
        .patch(
            &chosen,
            json!({"metadata": {"annotations": {"touch": "1"}}}),
        )
        .await;
    eventually("the new password in the user's Secret", WAIT, || async {
        scope.secret_text(&chosen, "password").await == "second-Password2"
    })
    .await;
    wait_produce(
        &Identity::Scram {
            user: chosen.clone(),
            password: "second-Password2".to_owned(),
        },
        &topic,
    )
    .await;
    assert!(
        produce(
            &Identity::Scram {
                user: chosen.clone(),
                password: "first-Password1".to_owned(),
            },
            &topic
        )
        .await
        .is_err(),
        "the old password is refused"
    );
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_one_rule_changes_one_binding_and_quotas_come_and_go() {
    let scope = Scope::new("uo-diff").await;
    let operator = Operator::on(&scope, &[]);
    let admin = admin();
    let user = scope.user("bob");
    scope
        .create_user(
            &user,
            json!({
                "authorization": {"type": "simple", "acls": [
                    topic_acl("a", &["Read"]), topic_acl("b", &["Read"]), topic_acl("c", &["Read"])]},
                "quotas": {"producerByteRate": 1024, "consumerByteRate": 2048,
                           "requestPercentage": 40, "controllerMutationRate": 5.5}
            }),
        )
        .await;
    scope.users().wait_ready(&user).await;
    let before = acls(&admin, &user).await;
    assert_eq!(before.len(), 3);
    assert!(
        before
            .iter()
            .all(|binding| binding.operation == AclOperation::Read
                && binding.resource_type == AclResourceType::Topic)
    );
    assert_eq!(
        quotas(&admin, &user).await,
        BTreeMap::from([
            ("consumer_byte_rate".to_owned(), 2048.0),
            ("controller_mutation_rate".to_owned(), 5.5),
            ("producer_byte_rate".to_owned(), 1024.0),
            ("request_percentage".to_owned(), 40.0),
        ])
    );

    scope
        .users()
        .patch(
            &user,
            json!({"spec": {
                "authorization": {"type": "simple", "acls": [
                    topic_acl("a", &["Read"]), topic_acl("b", &["Read"]), topic_acl("d", &["Read"])]},
                // A merge patch: the quotas to remove are set to null.
                "quotas": {"producerByteRate": 1024, "consumerByteRate": null,
                           "requestPercentage": null, "controllerMutationRate": null}
            }}),
        )
        .await;
    scope.users().wait_ready(&user).await;
    eventually("the changed rule in Kafka", WAIT, || async {
        acls(&admin, &user)
            .await
            .iter()
            .any(|binding| binding.resource_name == "d")
    })
    .await;
    let after = acls(&admin, &user).await;
    let removed: Vec<_> = before.difference(&after).collect();
    let added: Vec<_> = after.difference(&before).collect();
    assert_eq!(removed.len(), 1, "{removed:?}");
    assert_eq!(removed[0].resource_name, "c");
    assert_eq!(added.len(), 1, "{added:?}");
    assert_eq!(
        quotas(&admin, &user).await,
        BTreeMap::from([("producer_byte_rate".to_owned(), 1024.0)])
    );

    // Without authorization and quotas, the user has neither.
    scope
        .users()
        .patch(
            &user,
            json!({"spec": {"authorization": null, "quotas": null}}),
        )
        .await;
    scope.users().wait_ready(&user).await;
    eventually("no ACLs and no quotas", WAIT, || async {
        acls(&admin, &user).await.is_empty() && quotas(&admin, &user).await.is_empty()
    })
    .await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_user_removes_everything_and_ignored_users_stay() {
    let scope = Scope::new("uo-delete").await;
    let operator = Operator::on(
        &scope,
        &[("STRIMZI_FULL_RECONCILIATION_INTERVAL_MS", "3000")],
    );
    let admin = admin();
    let user = scope.user("carol");
    scope
        .create_user(
            &user,
            json!({"authentication": {"type": "scram-sha-512"},
                   "authorization": {"type": "simple", "acls": [topic_acl("x", &["Read"])]},
                   "quotas": {"producerByteRate": 100}}),
        )
        .await;
    scope.users().wait_ready(&user).await;
    assert!(has_scram(&admin, &user).await);

    // Kafka users without a KafkaUser: one the sweep removes, one it must ignore.
    let orphan = scope.user("orphan");
    let ignored = format!("keep-{}", scope.namespace);
    for name in [&orphan, &ignored] {
        admin
            .alter_user_scram_credentials(&[ScramCredentialChange::Upsert {
                user: name.clone(),
                password: "Orphan-password1".to_owned(),
                iterations: 4096,
            }])
            .await
            .unwrap();
    }

    scope.users().delete(&user).await;
    eventually(
        "the user's Secret, ACLs, quotas and credential gone",
        WAIT,
        || async {
            scope.secret(&user).await.is_none()
                && acls(&admin, &user).await.is_empty()
                && quotas(&admin, &user).await.is_empty()
                && !has_scram(&admin, &user).await
        },
    )
    .await;
    eventually("the orphan swept", WAIT, || async {
        !has_scram(&admin, &orphan).await
    })
    .await;
    assert!(has_scram(&admin, &ignored).await, "an ignored user stays");
    assert!(
        has_scram(&admin, "admin").await,
        "the broker's admin user stays"
    );
    operator.stop().await;
    admin
        .alter_user_scram_credentials(&[ScramCredentialChange::Delete {
            user: ignored,
            mechanism: strimzi_operator_common::kafka::ScramMechanism::ScramSha512,
        }])
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kafka_user_of_one_namespace_cannot_take_over_the_same_name_in_another() {
    let first = Scope::new("uo-tenant").await;
    let second = Scope::new("uo-tenant").await;
    let watched = format!("{},{}", first.namespace, second.namespace);
    let operator = Operator::start(
        &first.client,
        first.config(&[("STRIMZI_NAMESPACE", watched.as_str())]),
    );
    let admin = admin();
    let user = first.user("alice");
    first
        .create_user(
            &user,
            json!({"authentication": {"type": "scram-sha-512"},
                   "authorization": {"type": "simple", "acls": [topic_acl("mine", &["Read"])]},
                   "quotas": {"producerByteRate": 1024}}),
        )
        .await;
    first.users().wait_ready(&user).await;
    let owned = (acls(&admin, &user).await, quotas(&admin, &user).await);
    assert_eq!(owned.0.len(), 1);
    assert!(has_scram(&admin, &user).await);
    let password = first.secret_text(&user, "password").await;

    // The same name in the other namespace, asking for a certificate and other rights.
    second
        .create_user(
            &user,
            json!({"authentication": {"type": "tls"},
                   "authorization": {"type": "simple", "acls": [topic_acl("theirs", &["Write"])]},
                   "quotas": {"producerByteRate": 999_999}}),
        )
        .await;
    let conflict = second
        .users()
        .wait_condition(&user, "NotReady", "ResourceConflict", "managed by")
        .await;
    let message = conflict["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "Ref{{namespace='{}', name='{user}'}}",
            first.namespace
        )),
        "{message}"
    );
    // Nothing written for it: no certificate, no ACL, no quota; the owner's untouched.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert!(second.secret(&user).await.is_none(), "no certificate");
    let tls_name = format!("CN={user}");
    assert!(acls(&admin, &tls_name).await.is_empty());
    assert!(quotas(&admin, &tls_name).await.is_empty());
    assert_eq!(
        (acls(&admin, &user).await, quotas(&admin, &user).await),
        owned
    );
    assert!(
        has_scram(&admin, &user).await,
        "the owner's credential stays"
    );
    assert_eq!(first.secret_text(&user, "password").await, password);
    assert!(first.users().is_ready(&user).await);

    // Deleting the refused one leaves the owner's Kafka user alone.
    second.users().delete(&user).await;
    eventually("the refused KafkaUser gone", WAIT, || async {
        !second.users().exists(&user).await
    })
    .await;
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        (acls(&admin, &user).await, quotas(&admin, &user).await),
        owned
    );
    assert!(has_scram(&admin, &user).await);

    first.users().delete(&user).await;
    eventually("the owner's Kafka user removed", WAIT, || async {
        acls(&admin, &user).await.is_empty() && !has_scram(&admin, &user).await
    })
    .await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_clients_ca_certificate_reissues_the_user_certificate() {
    let scope = Scope::new("uo-renew").await;
    let operator = Operator::on(&scope, &[]);
    let admin = admin();
    let user = scope.user("dave");
    let topic = format!("{}.t", scope.namespace);
    create_topic(&admin, &topic).await;
    scope
        .create_user(
            &user,
            json!({"authentication": {"type": "tls"},
                   "authorization": {"type": "simple", "acls": [topic_acl(&topic, &["Write", "Describe"])]}}),
        )
        .await;
    scope.users().wait_ready(&user).await;
    let first = scope.secret_text(&user, "user.crt").await;

    // The same CA key with a new certificate, as a renewal by the cluster operator leaves it.
    let renewed = env().kafka().renewed_ca_pem().unwrap();
    assert_ne!(renewed, env().kafka().ca_pem());
    scope.create_secret(CA_CERT, &[("ca.crt", &renewed)]).await;
    eventually("a new user certificate", WAIT, || async {
        scope.secret_text(&user, "user.crt").await != first
    })
    .await;
    assert_eq!(scope.secret_text(&user, "ca.crt").await, renewed);
    let identity = Identity::Certificate {
        cert: scope.secret_text(&user, "user.crt").await,
        key: scope.secret_text(&user, "user.key").await,
    };
    wait_produce(&identity, &topic).await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_ends_in_a_clear_condition_and_other_users_are_unaffected() {
    let scope = Scope::new("uo-bad").await;
    let operator = Operator::on(&scope, &[]);
    let admin = admin();
    let good = scope.user("good");
    scope
        .create_user(&good, json!({"authentication": {"type": "scram-sha-512"}}))
        .await;
    let cases = [
        (
            scope.user("no-secret"),
            json!({"authentication": {"type": "scram-sha-512", "password": {"valueFrom":
                    {"secretKeyRef": {"name": "missing", "key": "pw"}}}},
                   "authorization": {"type": "simple", "acls": [topic_acl("x", &["Read"])]}}),
            "InvalidResourceException",
            "missing",
        ),
        (
            scope.user("no-key"),
            json!({"authentication": {"type": "scram-sha-512", "password": {"valueFrom":
                    {"secretKeyRef": {"name": "some-password", "key": "absent"}}}}}),
            "InvalidResourceException",
            "absent",
        ),
        (
            scope.user("cluster-named"),
            json!({"authorization": {"type": "simple", "acls": [
                {"resource": {"type": "cluster", "name": "my-topic"}, "operations": ["Alter"]}]}}),
            "InvalidResourceException",
            "acls[0]",
        ),
        (
            format!("{}-{}", scope.namespace, "l".repeat(60)),
            json!({"authentication": {"type": "tls"}}),
            "InvalidResourceException",
            "64",
        ),
    ];
    scope.create_secret("some-password", &[("pw", "x")]).await;
    for (name, spec, _, _) in &cases {
        scope.create_user(name, spec.clone()).await;
    }
    for (name, _, reason, message) in &cases {
        scope
            .users()
            .wait_condition(name, "NotReady", reason, message)
            .await;
        assert!(scope.secret(name).await.is_none(), "{name}: no Secret");
        assert!(
            acls(&admin, name).await.is_empty(),
            "{name}: nothing in Kafka"
        );
        assert!(!has_scram(&admin, name).await, "{name}: no credential");
    }
    scope.users().wait_ready(&good).await;

    // Without the clients CA, a tls user is NotReady; with it back, Ready.
    let tls = scope.user("tls");
    scope
        .secrets()
        .delete(CA_KEY, &Default::default())
        .await
        .unwrap();
    scope
        .create_user(&tls, json!({"authentication": {"type": "tls"}}))
        .await;
    scope
        .users()
        .wait_condition(&tls, "NotReady", "InvalidCertificateException", CA_KEY)
        .await;
    scope
        .create_secret(CA_KEY, &[("ca.key", &env().kafka().ca_key_pem())])
        .await;
    scope
        .users()
        .patch(&tls, json!({"metadata": {"annotations": {"retry": "now"}}}))
        .await;
    scope.users().wait_ready(&tls).await;
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_restarted_in_the_middle_of_a_batch_converges() {
    let scope = Scope::new("uo-restart").await;
    let names: Vec<String> = (0..40)
        .map(|index| scope.user(&format!("u{index}")))
        .collect();
    let operator = Operator::on(&scope, &[("STRIMZI_BATCH_MAXIMUM_BLOCK_SIZE", "5")]);
    for name in &names {
        scope
            .create_user(
                name,
                json!({"authentication": {"type": "scram-sha-512"},
                       "authorization": {"type": "simple", "acls": [
                           topic_acl("r1", &["Read"]), topic_acl("r2", &["Read", "Write"])]}}),
            )
            .await;
    }
    // Stop while the first batches are in flight.
    eventually("some users Ready", WAIT, || async {
        let mut ready = 0;
        for name in &names {
            if scope.users().is_ready(name).await {
                ready += 1;
            }
        }
        ready > 0
    })
    .await;
    operator.stop().await;
    let operator = Operator::on(&scope, &[]);
    for name in &names {
        scope.users().wait_ready(name).await;
    }
    let admin = admin();
    for name in &names {
        assert_eq!(
            acls(&admin, name).await.len(),
            3,
            "{name}: exactly its bindings"
        );
        assert!(has_scram(&admin, name).await, "{name}: a credential");
        let password = scope.secret_text(name, "password").await;
        assert_eq!(password.len(), 32);
    }
    operator.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kafka_user_example_becomes_ready() {
    use strimzi_tests::reference::{own_examples_dir, reference_examples_dir, yaml_files};
    let scope = Scope::new("uo-examples").await;
    let operator = Operator::on(&scope, &[]);
    let mut files = yaml_files(&reference_examples_dir());
    files.extend(yaml_files(&own_examples_dir().join("user")));
    let mut users = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for mut document in strimzi_api::document::yaml_documents(&text).unwrap() {
            match document["kind"].as_str() {
                Some("KafkaUser") => {
                    // Names unique to this test, so that examples sharing a name do not clash.
                    let name = scope.user(&format!("e{}", users.len()));
                    document["metadata"]["name"] = json!(name);
                    scope.users().create(document).await;
                    users.push((name, file.clone()));
                }
                Some("Secret") if file.starts_with(own_examples_dir()) => {
                    let secret: k8s_openapi::api::core::v1::Secret =
                        serde_json::from_value(document).unwrap();
                    post_secret(&scope.client, &scope.namespace, &secret).await;
                }
                _ => {}
            }
        }
    }
    assert!(users.len() >= 5, "the examples hold KafkaUsers: {users:?}");
    for (name, file) in &users {
        scope.users().wait_ready(name).await;
        let status = scope.users().status(name).await;
        assert!(
            status["username"].is_string(),
            "{}: {status}",
            file.display()
        );
    }
    // The queries of Strimzi's operator dashboard for users, evaluated by promtool over
    // what `/metrics` serves (the HTTP handler sends this text).
    use strimzi_tests::prometheus::{
        assert_dashboard_answered, operator_dashboard_queries, parse_exposition,
    };
    assert_dashboard_answered(
        &parse_exposition(&operator.runtime.metrics().encode().unwrap()),
        &operator_dashboard_queries(&["KafkaUser"], false),
    );
    for (name, _) in &users {
        scope.users().delete(name).await;
    }
    let admin = admin();
    for (name, _) in &users {
        eventually(&format!("{name} gone from Kafka"), WAIT, || async {
            acls(&admin, name).await.is_empty()
                && acls(&admin, &format!("CN={name}")).await.is_empty()
                && !has_scram(&admin, name).await
        })
        .await;
    }
    operator.stop().await;
}
