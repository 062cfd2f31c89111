//! core's [`a2a_native::client::Client`]: every operation takes and returns ProtoJSON text, as
//! Promises; streams are [`EventStream`]s that the JS layer makes async iterables.

use crate::credentials::{JsCredentials, Provide};
use crate::{errors, models};
use a2a_native::client::{self as core, ClientBuilder, ClientOptions};
use a2a_native::trace_context::{TraceParent, with_caller};
use napi::Result;
use std::future::Future;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The builder core's `ClientOptions` (JSON, read strictly there) describe, with the JS
/// credentials function (which JSON cannot carry) when there is one.
fn builder(options_json: Option<String>, credentials: Option<Provide>) -> Result<ClientBuilder> {
    let value = match options_json {
        Some(text) => models::value(&text)?,
        None => serde_json::json!({}),
    };
    let mut b = ClientOptions::from_value(value).and_then(|o| o.builder()).map_err(errors::to_js)?;
    if let Some(provide) = credentials {
        b = b.credentials(Arc::new(JsCredentials(provide)));
    }
    Ok(b)
}

/// The native half of a call's `AbortSignal`: `abort()` ends the calls given it now, dropping
/// their requests (so the connection closes, as fetch's does), instead of leaving them to finish
/// unseen. The JS layer rejects with the signal's reason.
#[napi_derive::napi]
pub struct Abort(CancellationToken);

#[napi_derive::napi]
impl Abort {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        Abort(CancellationToken::new())
    }

    #[napi]
    pub fn abort(&self) {
        self.0.cancel();
    }
}

/// `call`, unless `abort` fires first.
async fn abortable<T>(abort: Option<&Abort>, call: impl Future<Output = Result<T>>) -> Result<T> {
    let Some(token) = abort.map(|a| a.0.clone()) else { return call.await };
    tokio::select! {
        biased;
        _ = token.cancelled() => Err(errors::to_js(a2a_native::error::A2AError::new(
            a2a_native::error::ErrorKind::Transport,
            "the call was aborted",
        ))),
        reply = call => reply,
    }
}

#[napi_derive::napi]
pub struct Client {
    inner: core::Client,
}

/// The caller's trace context as the JS layer read it from @opentelemetry/api (W3C text).
#[napi_derive::napi(object)]
pub struct CallerTrace {
    pub traceparent: Option<String>,
    pub tracestate: Option<String>,
    pub baggage: Option<String>,
}

fn caller(trace: Option<CallerTrace>) -> TraceParent {
    let Some(t) = trace else { return TraceParent::default() };
    TraceParent::from_text(t.traceparent.as_deref(), t.tracestate.as_deref(), t.baggage.as_deref())
}

#[napi_derive::napi]
impl Client {
    /// Resolves the agent card at `url` and picks an interface.
    #[napi(factory)]
    pub async fn connect(
        url: String,
        options_json: Option<String>,
        #[napi(ts_arg_type = "(method: string, url: string) => Promise<string>")] credentials: Option<Provide>,
    ) -> Result<Client> {
        crate::logging::install();
        let inner = builder(options_json, credentials)?.connect(&url).await.map_err(errors::to_js)?;
        Ok(Client { inner })
    }

    /// A client for an agent card (JSON), without network access.
    #[napi(factory)]
    pub fn from_card(
        card_json: String,
        options_json: Option<String>,
        #[napi(ts_arg_type = "(method: string, url: string) => Promise<string>")] credentials: Option<Provide>,
    ) -> Result<Client> {
        let card = models::value(&card_json)?;
        let inner = builder(options_json, credentials)?.from_card_value(card).map_err(errors::to_js)?;
        Ok(Client { inner })
    }

    /// The agent card, as JSON.
    #[napi(getter)]
    pub fn card(&self) -> String {
        models::text(self.inner.card())
    }
    #[napi(getter)]
    pub fn url(&self) -> String {
        self.inner.url().to_owned()
    }
    #[napi(getter)]
    pub fn binding(&self) -> &'static str {
        self.inner.binding().as_str()
    }
    #[napi(getter)]
    pub fn protocol_version(&self) -> &'static str {
        self.inner.protocol_version().as_str()
    }

    /// A unary operation by its A2A name (`"GetTask"`) with its ProtoJSON text: core reads,
    /// validates and calls it (`Client::call`); the result's ProtoJSON text (`null` for Delete).
    #[napi]
    pub async fn call(
        &self,
        method: String,
        request: String,
        trace: Option<CallerTrace>,
        abort: Option<&Abort>,
    ) -> Result<String> {
        let request = models::value(&request)?;
        let call = async { with_caller(caller(trace), self.inner.call(&method, request)).await.map_err(errors::to_js) };
        Ok(abortable(abort, call).await?.to_string())
    }
    /// An extension method: `{"result": ..., "activated": [...]}` as JSON.
    #[napi]
    pub async fn call_method(
        &self,
        method: String,
        params_json: String,
        extensions: Vec<String>,
        trace: Option<CallerTrace>,
        abort: Option<&Abort>,
    ) -> Result<String> {
        let params: serde_json::Value =
            serde_json::from_str(&params_json).map_err(|e| errors::invalid("params", e.to_string()))?;
        let call = async {
            with_caller(caller(trace), self.inner.call_method(&method, params, &extensions))
                .await
                .map_err(errors::to_js)
        };
        let reply = abortable(abort, call).await?;
        Ok(serde_json::json!({"result": reply.result, "activated": reply.activated}).to_string())
    }

    /// Every task matching `request` (ListTasksRequest JSON), page after page, as core's pager
    /// reads them (it stops if a server hands back the token it was given).
    #[napi]
    pub fn list_all_tasks(&self, request: String) -> Result<TaskPager> {
        let req =
            a2a_native::request::A2ARequest::list_tasks_from_caller(models::value(&request)?).map_err(errors::to_js)?;
        Ok(TaskPager(core::Feed::new(self.inner.list_all_tasks(req))))
    }

    /// A streaming operation by its A2A name (`Client::stream`). Opening it is abortable; once open, the JS layer closes it when its signal fires.
    #[napi]
    pub async fn stream(
        &self,
        method: String,
        request: String,
        trace: Option<CallerTrace>,
        abort: Option<&Abort>,
    ) -> Result<EventStream> {
        let request = models::value(&request)?;
        let open =
            async { with_caller(caller(trace), self.inner.stream(&method, request)).await.map_err(errors::to_js) };
        Ok(EventStream(core::Feed::new(abortable(abort, open).await?)))
    }
}

/// The events of one stream (StreamResponse JSON): core's [`core::Feed`]. It ends (and its
/// connection closes) when the server ends it, on an error, or on `close()`; never by waiting
/// for a garbage collector.
#[napi_derive::napi]
pub struct EventStream(core::Feed<a2a_native::model::StreamResponse>);

#[napi_derive::napi]
impl EventStream {
    /// The next event's JSON; `null` once the stream is over.
    #[napi]
    pub async fn next(&self) -> Result<Option<String>> {
        self.0.next().await.transpose().map(|e| e.map(|e| models::text(&e))).map_err(errors::to_js)
    }

    /// Ends the stream now (the task goes on).
    #[napi]
    pub async fn close(&self) {
        self.0.close().await;
    }
}

/// The tasks of `listAllTasks` (Task JSON), fetched a page at a time as they are read.
#[napi_derive::napi]
pub struct TaskPager(core::Feed<a2a_native::model::Task>);

#[napi_derive::napi]
impl TaskPager {
    /// The next task's JSON; `null` after the last one.
    #[napi]
    pub async fn next(&self) -> Result<Option<String>> {
        self.0.next().await.transpose().map(|t| t.map(|t| models::text(&t))).map_err(errors::to_js)
    }
}
