//! Node-ID assignment across pools, with `strimzi.io/next-node-ids` and
//! `strimzi.io/remove-node-ids`. Owner: nodes and pods.
