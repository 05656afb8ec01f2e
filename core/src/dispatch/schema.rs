//! OpenRPC descriptions for `rpc.discover` generated from types, by schemars
//! (feature `schemars`): [`RouterBuilder::describe`] and
//! [`RouterBuilder::typed_described`].

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::handler::RpcError;
use super::router::RouterBuilder;

impl RouterBuilder {
    /// Describes the registered method `name` for `rpc.discover` from its
    /// params type `P` and result type `R` (their schemars JSON Schemas, draft
    /// 7 as OpenRPC 1.3 uses):
    ///
    /// - a tuple `P` (positional params) gives one content descriptor per
    ///   element, `arg0`, `arg1`, …, and `"paramStructure":"by-position"`;
    /// - a struct `P` (named params) one per field, by its serde name (in
    ///   name order), `required` unless it may be absent, and
    ///   `"paramStructure":"by-name"`;
    /// - `()` no params; any other `P` (a `Vec`, an enum) no descriptors, and
    ///   the whole params value's schema as the extension `x-params-schema`.
    ///
    /// `R` is the `result` descriptor. Types the schemas refer to are put in
    /// the document's `components.schemas`.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    /// use switchboard::{Router, RpcError, Session};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Transfer { to: String, amount: u64, memo: Option<String> }
    /// #[derive(Serialize, JsonSchema)]
    /// struct Receipt { id: u64 }
    ///
    /// let router = Router::builder()
    ///     .typed("transfer", |t: Transfer| Ok(Receipt { id: t.amount }))
    ///     .describe::<Transfer, Receipt>("transfer")
    ///     .build()
    ///     .unwrap();
    /// let doc: serde_json::Value = serde_json::from_slice(router.discover_document()).unwrap();
    /// let m = &doc["methods"][0];
    /// assert_eq!(m["paramStructure"], "by-name");
    /// let names: Vec<_> = m["params"].as_array().unwrap().iter().map(|p| (p["name"].as_str().unwrap(), p["required"] == true)).collect();
    /// assert_eq!(names, [("amount", true), ("memo", false), ("to", true)]);
    /// assert_eq!(m["result"]["schema"]["$ref"], "#/components/schemas/Receipt");
    /// assert_eq!(doc["components"]["schemas"]["Receipt"]["properties"]["id"]["type"], "integer");
    /// ```
    pub fn describe<P: JsonSchema, R: JsonSchema>(self, name: &str) -> Self {
        let mut generator = SchemaSettings::draft07()
            .with(|s| s.definitions_path = "/components/schemas".into())
            .into_generator();
        let params = P::json_schema(&mut generator);
        let (descriptors, structure, whole) = descriptors(params, &mut generator);
        let result = finished(generator.subschema_for::<R>(), &mut generator);
        let components = generator.take_definitions(true);
        self.push_described(
            name,
            Value::Array(descriptors),
            json!({ "name": "result", "schema": result }),
            (structure, whole),
            components,
        )
    }

    /// [`RouterBuilder::typed`] and [`RouterBuilder::describe`] in one: the
    /// method's OpenRPC description comes from the closure's types.
    ///
    /// ```
    /// use switchboard::{Router, RpcError, Session};
    /// let router = Router::builder()
    ///     .typed_described("subtract", |(a, b): (i64, i64)| {
    ///         a.checked_sub(b).ok_or(RpcError::new(1, "overflow"))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let doc: serde_json::Value = serde_json::from_slice(router.discover_document()).unwrap();
    /// let m = &doc["methods"][0];
    /// assert_eq!(m["name"], "subtract");
    /// assert_eq!(m["paramStructure"], "by-position");
    /// assert_eq!(m["params"][1]["name"], "arg1");
    /// assert_eq!(m["params"][1]["schema"]["type"], "integer");
    /// assert_eq!(m["result"]["schema"]["format"], "int64");
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    /// ```
    pub fn typed_described<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: DeserializeOwned + JsonSchema,
        R: Serialize + JsonSchema,
        F: Fn(P) -> Result<R, RpcError> + Send + Sync + 'static,
    {
        self.typed(name, f).describe::<P, R>(name)
    }
}

/// The content descriptors for params of schema `params`, their
/// `paramStructure`, or (for a shape that is neither a tuple nor a struct)
/// the whole params schema.
fn descriptors(
    params: Schema,
    generator: &mut SchemaGenerator,
) -> (Vec<Value>, Option<&'static str>, Option<Value>) {
    let value = params.to_value();
    if let Some(items) = value.get("prefixItems").and_then(Value::as_array) {
        let list = items
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let schema = finished_value(s.clone(), generator);
                json!({ "name": format!("arg{i}"), "schema": schema, "required": true })
            })
            .collect();
        return (list, Some("by-position"), None);
    }
    if let Some(props) = value.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = value
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let list = props
            .iter()
            .map(|(name, s)| {
                let schema = finished_value(s.clone(), generator);
                json!({ "name": name, "schema": schema, "required": required.contains(&name.as_str()) })
            })
            .collect();
        return (list, Some("by-name"), None);
    }
    if value.get("type").and_then(Value::as_str) == Some("null") {
        return (Vec::new(), None, None);
    }
    let whole = finished_value(value, generator);
    (Vec::new(), None, Some(whole))
}

/// `schema` with the generator's draft-7 transforms applied.
fn finished(mut schema: Schema, generator: &mut SchemaGenerator) -> Value {
    for t in generator.transforms_mut() {
        t.transform(&mut schema);
    }
    schema.to_value()
}

fn finished_value(value: Value, generator: &mut SchemaGenerator) -> Value {
    match Schema::try_from(value) {
        Ok(schema) => finished(schema, generator),
        Err(_) => json!({}),
    }
}
