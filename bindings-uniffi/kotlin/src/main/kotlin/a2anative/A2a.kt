// Idiomatic Kotlin around uniffi's generated a2a_native_uniffi.kt: streams as Flows, the spec
// code on every A2aException, and short builders for the records used most.
package a2anative

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.withContext

/** The JSON-RPC code of the spec error (-32001 TaskNotFound, ...). */
val A2aException.code: Int get() = when (this) { is A2aException.Failure -> code }

/** The spec's name of the error (`TaskNotFoundError`, ...). */
val A2aException.errorName: String get() = when (this) { is A2aException.Failure -> name }

/** The field violations of an InvalidParams error (JSON paths such as `message.parts[0]`). */
val A2aException.fieldViolations: List<FieldViolation> get() = when (this) { is A2aException.Failure -> violations }

/**
 * The stream's events as a cold Flow (collect it once). The stream is closed when collection
 * ends, fails or is canceled, so no connection waits for the garbage collector.
 */
fun EventStream.asFlow(): Flow<StreamResponse> = flow {
    try {
        while (true) emit(next() ?: break)
    } finally {
        withContext(NonCancellable) { stop() }
        destroy()
    }
}

/** SendStreamingMessage as a Flow: the request is sent when the Flow is collected. */
fun Client.stream(request: SendMessageRequest): Flow<StreamResponse> =
    flow { emitAll(sendStreamingMessage(request).asFlow()) }

fun Client.streamText(text: String, taskId: String? = null, contextId: String? = null): Flow<StreamResponse> =
    stream(textRequest(text, taskId, contextId))

/** SubscribeToTask as a Flow. */
fun Client.subscribe(taskId: String): Flow<StreamResponse> =
    flow { emitAll(subscribeToTask(SubscribeToTaskRequest(id = taskId)).asFlow()) }

/** Every task ListTasks finds, page after page, as a Flow (pages are fetched as it is collected). */
fun Client.allTasks(request: ListTasksRequest = ListTasksRequest()): Flow<A2aTask> = flow {
    val pager = listAllTasks(request)
    try {
        while (true) emit(pager.next() ?: break)
    } finally {
        pager.destroy()
    }
}

suspend fun Client.getTask(taskId: String): A2aTask = getTask(GetTaskRequest(id = taskId))

suspend fun Client.cancelTask(taskId: String): A2aTask = cancelTask(CancelTaskRequest(id = taskId))

fun textPart(text: String): Part = Part(content = PartContent.Text(text))

fun userMessage(text: String, taskId: String = "", contextId: String = ""): Message =
    Message(messageId = uuidV4(), role = Role.USER, parts = listOf(textPart(text)), taskId = taskId, contextId = contextId)

/** A card for an embedded agent; the server fills in its interfaces when `supportedInterfaces` is empty. */
fun agentCard(
    name: String,
    description: String,
    version: String = "1.0.0",
    streaming: Boolean = true,
    skills: List<AgentSkill> = listOf(AgentSkill(id = "main", name = name, description = description, tags = listOf("main"))),
): AgentCard = AgentCard(
    name = name,
    description = description,
    supportedInterfaces = listOf(),
    version = version,
    capabilities = AgentCapabilities(streaming = streaming),
    defaultInputModes = listOf("text/plain"),
    defaultOutputModes = listOf("text/plain"),
    skills = skills,
)

/** The task of a SendMessage reply (`null` when the agent answered with a message). */
val SendMessageResponse.task: A2aTask? get() = (payload as? SendMessageResponsePayload.Task)?.task

/** The direct message of a SendMessage reply (`null` when it is a task). */
val SendMessageResponse.message: Message? get() = (payload as? SendMessageResponsePayload.Message)?.message

/** The task state an event reports (`null` for a message or an artifact). */
val StreamResponse.state: TaskState?
    get() = when (val p = payload) {
        is StreamResponsePayload.Task -> p.task.status.state
        is StreamResponsePayload.StatusUpdate -> p.statusUpdate.status.state
        else -> null
    }

/** The text parts of a message, joined. */
val Message.text: String get() = parts.mapNotNull { (it.content as? PartContent.Text)?.text }.joinToString("")

/** The text parts of every artifact of a task, joined. */
val A2aTask.artifactText: String
    get() = artifacts.flatMap { it.parts }.mapNotNull { (it.content as? PartContent.Text)?.text }.joinToString("")

/**
 * An extension method served by a Kotlin suspend function: `params` and the returned result are
 * JSON text. Throw `a2aError("TaskNotFoundError", "...")` to answer with a spec error; any other
 * exception is InternalError. Give it in `ServerOptions(methods = listOf(...))`.
 */
fun extensionMethod(
    name: String,
    extension: String,
    path: String? = null,
    handler: suspend (params: String, context: MethodContext) -> String,
): ExtensionMethod = ExtensionMethod(name, extension, path, object : MethodHandler {
    override suspend fun call(params: String, context: MethodContext): String = handler(params, context)
})

/**
 * A profile extension's rules: `check` returns `null` when a message follows them, else the rule
 * it breaks (sent as InvalidParamsError naming the extension). Give it in
 * `ServerOptions(profileChecks = listOf(...))`.
 */
fun profileCheck(extension: String, check: suspend (Message) -> String?): ExtensionProfile =
    ExtensionProfile(extension, object : ProfileCheck {
        override suspend fun check(message: Message): String? = check(message)
    })
