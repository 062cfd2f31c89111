// Idiomatic Swift around uniffi's generated A2ANative.swift: streams as AsyncThrowingStream,
// the spec code on every A2aException, and short builders for the records used most.
import Foundation

public extension A2aException {
    /// The JSON-RPC code of the spec error (-32001 TaskNotFound, ...).
    var code: Int32 { switch self { case let .Failure(code, _, _, _, _): return code } }
    /// The spec's name of the error (`TaskNotFoundError`, ...).
    var errorName: String { switch self { case let .Failure(_, name, _, _, _): return name } }
    /// The field violations of an InvalidParams error.
    var fieldViolations: [FieldViolation] { switch self { case let .Failure(_, _, _, _, v): return v } }
}

public extension EventStream {
    /// The stream's events; the stream stops when the sequence ends or its consumer goes away.
    func events() -> AsyncThrowingStream<StreamResponse, Error> {
        AsyncThrowingStream { continuation in
            let pump = Task {
                do {
                    while let event = try await self.next() {
                        continuation.yield(event)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
                await self.stop()
            }
            continuation.onTermination = { _ in
                pump.cancel()
                Task { await self.stop() }
            }
        }
    }
}

public extension Client {
    /// SendStreamingMessage as an AsyncThrowingStream.
    func stream(_ request: SendMessageRequest) async throws -> AsyncThrowingStream<StreamResponse, Error> {
        try await sendStreamingMessage(request: request).events()
    }

    func streamText(_ text: String, taskId: String? = nil, contextId: String? = nil) async throws -> AsyncThrowingStream<StreamResponse, Error> {
        try await stream(textRequest(text: text, taskId: taskId, contextId: contextId))
    }

    /// SubscribeToTask as an AsyncThrowingStream.
    func subscribe(taskId: String) async throws -> AsyncThrowingStream<StreamResponse, Error> {
        try await subscribeToTask(request: SubscribeToTaskRequest(id: taskId)).events()
    }

    /// Every task ListTasks finds, page after page (pages are fetched as the sequence is read).
    func allTasks(_ request: ListTasksRequest = ListTasksRequest()) throws -> AsyncThrowingStream<A2aTask, Error> {
        let pager = try listAllTasks(request: request)
        return AsyncThrowingStream { continuation in
            let pump = Task {
                do {
                    while let task = try await pager.next() {
                        continuation.yield(task)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in pump.cancel() }
        }
    }

    func getTask(id: String) async throws -> A2aTask { try await getTask(request: GetTaskRequest(id: id)) }

    func cancelTask(id: String) async throws -> A2aTask { try await cancelTask(request: CancelTaskRequest(id: id)) }
}

public func textPart(_ text: String) -> Part { Part(content: .text(text: text)) }

public func userMessage(_ text: String, taskId: String = "", contextId: String = "") -> Message {
    Message(messageId: uuidV4(), contextId: contextId, taskId: taskId, role: .user, parts: [textPart(text)])
}

/// A card for an embedded agent; the server fills in its interfaces when none are given.
/// `skills` defaults to one skill named after the agent (every skill needs tags).
public func agentCard(
    name: String, description: String, version: String = "1.0.0", streaming: Bool = true,
    skills: [AgentSkill]? = nil
) -> AgentCard {
    AgentCard(
        name: name, description: description, supportedInterfaces: [], version: version,
        capabilities: AgentCapabilities(streaming: streaming),
        defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
        skills: skills ?? [AgentSkill(id: "main", name: name, description: description, tags: ["main"])]
    )
}

/// An extension method served by a Swift async closure: `params` and the returned result are
/// JSON text. Throw an `A2aException` to answer with that spec error; anything else is
/// InternalError. Give it in `ServerOptions(methods: [...])`. (Kotlin's `extensionMethod`.)
public func extensionMethod(
    name: String, `extension`: String, path: String? = nil,
    _ handler: @escaping @Sendable (_ params: String, _ context: MethodContext) async throws -> String
) -> ExtensionMethod {
    ExtensionMethod(name: name, extension: `extension`, path: path, handler: ClosureMethodHandler(handler))
}

/// A profile extension's rules: `check` returns `nil` when a message follows them, else the rule
/// it breaks (sent as InvalidParamsError naming the extension). Give it in
/// `ServerOptions(profileChecks: [...])`. (Kotlin's `profileCheck`.)
public func profileCheck(
    `extension`: String, _ check: @escaping @Sendable (_ message: Message) async throws -> String?
) -> ExtensionProfile {
    ExtensionProfile(extension: `extension`, check: ClosureProfileCheck(check))
}

private final class ClosureMethodHandler: MethodHandler, @unchecked Sendable {
    let body: @Sendable (String, MethodContext) async throws -> String
    init(_ body: @escaping @Sendable (String, MethodContext) async throws -> String) { self.body = body }
    func call(params: String, context: MethodContext) async throws -> String { try await body(params, context) }
}

private final class ClosureProfileCheck: ProfileCheck, @unchecked Sendable {
    let body: @Sendable (Message) async throws -> String?
    init(_ body: @escaping @Sendable (Message) async throws -> String?) { self.body = body }
    func check(message: Message) async throws -> String? { try await body(message) }
}

public extension SendMessageResponse {
    /// The task of the reply (`nil` when the agent answered with a message).
    var task: A2aTask? { if case let .task(task)? = payload { return task }; return nil }
    var message: Message? { if case let .message(message)? = payload { return message }; return nil }
}

public extension StreamResponse {
    /// The task state an event reports (`nil` for a message or an artifact).
    var state: TaskState? {
        switch payload {
        case let .task(task)?: return task.status.state
        case let .statusUpdate(update)?: return update.status.state
        default: return nil
        }
    }
}

public extension Message {
    /// The text parts, joined.
    var text: String { parts.compactMap { if case let .text(t)? = $0.content { return t }; return nil }.joined() }
}

public extension A2aTask {
    /// The text parts of every artifact, joined.
    var artifactText: String {
        artifacts.flatMap(\.parts).compactMap { if case let .text(t)? = $0.content { return t }; return nil }.joined()
    }
}
