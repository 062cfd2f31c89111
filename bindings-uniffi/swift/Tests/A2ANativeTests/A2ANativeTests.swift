// Mirrors the Kotlin suite (../../kotlin/src/test): a Swift executor served by our server to the
// Swift client and the Rust CLI, streams as AsyncThrowingStream, errors with spec codes,
// cancellation, and the shared model vectors. Run with `swift test` (see ../../README.md).
import A2ANative
import Foundation
import XCTest

let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../..").standardized

final class Echo: AgentExecutor, @unchecked Sendable {
    func execute(context: RequestContext, events: EventSink) async throws {
        try await events.statusText(state: .working, text: "working")
        try await events.artifactText(name: "echo", text: "echo: \(context.text)")
        try await events.status(state: .completed)
    }
    func cancel(context: RequestContext, events: EventSink) async throws {}
}

actor Flags {
    var started: String?
    var coroutineCanceled = false
    var cancelHook: String?
    func start(_ id: String) { started = id }
    func canceled() { coroutineCanceled = true }
    func hook(_ id: String) { cancelHook = id }
}

final class Sleeper: AgentExecutor, @unchecked Sendable {
    let flags = Flags()
    func execute(context: RequestContext, events: EventSink) async throws {
        try await events.status(state: .working)
        await flags.start(context.taskId)
        do {
            try await Task.sleep(nanoseconds: 60_000_000_000)
        } catch is CancellationError {
            await flags.canceled()
            throw CancellationError()
        }
    }
    func cancel(context: RequestContext, events: EventSink) async throws { await flags.hook(context.taskId) }
}

func serving<T>(_ executor: AgentExecutor, options: ServerOptions? = nil, _ body: (AgentServer) async throws -> T) async throws -> T {
    let server = try AgentServer(card: agentCard(name: "swift-agent", description: "An agent written in Swift"), executor: executor, options: options)
    _ = try await server.start()
    do {
        let out = try await body(server)
        try await server.stop()
        return out
    } catch {
        try? await server.stop()
        throw error
    }
}

func until(_ condition: () async -> Bool) async throws {
    for _ in 0..<500 where !(await condition()) { try await Task.sleep(nanoseconds: 10_000_000) }
}

final class A2ANativeTests: XCTestCase {
    func testSwiftExecutorAnswersSwiftClient() async throws {
        try await serving(Echo()) { server in
            let client = try await Client.connect(url: server.url()!)
            let task = try await client.sendText(text: "from swift").task!
            XCTAssertEqual(task.status.state, .completed)
            XCTAssertEqual(task.artifactText, "echo: from swift")
        }
    }

    func testStreamIsAnAsyncSequence() async throws {
        try await serving(Echo()) { server in
            let client = try await Client.connect(url: server.url()!)
            var states: [TaskState] = []
            for try await event in try await client.streamText("s") {
                if let s = event.state { states.append(s) }
            }
            XCTAssertEqual(states.last, .completed)
            XCTAssertTrue(states.contains(.working))
        }
    }

    func testRustCliClient() async throws {
        try await serving(Echo()) { server in
            let p = Process()
            p.executableURL = repo.appendingPathComponent("target/debug/a2a")
            p.arguments = ["send", server.url()!, "from rust", "--json"]
            let pipe = Pipe()
            p.standardOutput = pipe
            try p.run()
            p.waitUntilExit()
            let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, 0)
            XCTAssertTrue(out.contains("TASK_STATE_COMPLETED") && out.contains("echo: from rust"), out)
        }
    }

    func testErrorsCarrySpecCodes() async throws {
        try await serving(Echo()) { server in
            let client = try await Client.connect(url: server.url()!)
            do {
                _ = try await client.getTask(id: "no-such-task")
                XCTFail("expected TaskNotFound")
            } catch let e as A2aException {
                XCTAssertEqual(e.code, -32001)
                XCTAssertEqual(e.errorName, "TaskNotFoundError")
            }
        }
    }

    func testExceptionFailsTheTask() async throws {
        final class Boom: AgentExecutor, @unchecked Sendable {
            struct Failure: Error {}
            func execute(context: RequestContext, events: EventSink) async throws { throw Failure() }
            func cancel(context: RequestContext, events: EventSink) async throws {}
        }
        try await serving(Boom()) { server in
            let task = try await Client.connect(url: server.url()!).sendText(text: "x").task!
            XCTAssertEqual(task.status.state, .failed)
        }
    }

    func testCancelReachesTheSwiftTaskAndTheHook() async throws {
        let agent = Sleeper()
        try await serving(agent) { server in
            let client = try await Client.connect(url: server.url()!)
            let request = SendMessageRequest(message: userMessage("work"), configuration: SendMessageConfiguration(returnImmediately: true))
            let taskId = try await client.sendMessage(request: request).task!.id
            try await until { await agent.flags.started != nil }
            XCTAssertEqual(try await client.cancelTask(id: taskId).status.state, .canceled)
            try await until { await agent.flags.coroutineCanceled && agent.flags.cancelHook != nil }
            let canceled = await agent.flags.coroutineCanceled
            let hook = await agent.flags.cancelHook
            XCTAssertTrue(canceled)
            XCTAssertEqual(hook, taskId)
        }
    }

    func testBearerTokens() async throws {
        try await serving(Echo(), options: ServerOptions(bearerTokens: ["s3cret"])) { server in
            do {
                _ = try await Client.connect(url: server.url()!).sendText(text: "x")
                XCTFail("expected Unauthenticated")
            } catch let e as A2aException {
                XCTAssertEqual(e.errorName, "UnauthenticatedError")
            }
            let client = try await Client.connect(url: server.url()!, options: ClientOptions(bearerToken: "s3cret"))
            XCTAssertEqual(try await client.sendText(text: "x").task!.status.state, .completed)
        }
    }

    func testModelVectors() throws {
        let folder = repo.appendingPathComponent("tests/vectors/model")
        var checked = 0
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) where file.pathExtension == "json" {
            let doc = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as! [String: Any]
            for group in doc["groups"] as! [[String: Any]] {
                let type = group["type"] as! String
                for case_ in group["valid"] as? [[String: Any]] ?? [] {
                    let input = try JSONSerialization.data(withJSONObject: case_["input"]!, options: [.fragmentsAllowed])
                    let expected = case_["canonical"] ?? case_["input"]!
                    let out = try recordRoundTrip(typeName: type, json: String(decoding: input, as: UTF8.self))
                    let got = try JSONSerialization.jsonObject(with: Data(out.utf8), options: [.fragmentsAllowed])
                    XCTAssertEqual(got as? NSObject, expected as? NSObject, "\(type)/\(case_["name"]!)")
                    checked += 1
                }
                for case_ in group["invalid"] as? [[String: Any]] ?? [] {
                    let input = try JSONSerialization.data(withJSONObject: case_["input"]!, options: [.fragmentsAllowed])
                    let error = case_["error"] as! [String: Any]
                    do {
                        _ = try validateJson(typeName: type, json: String(decoding: input, as: UTF8.self))
                        XCTFail("\(type)/\(case_["name"]!) should fail")
                    } catch let e as A2aException {
                        XCTAssertEqual(Int(e.code), error["code"] as? Int)
                        XCTAssertEqual(e.fieldViolations.first?.field, error["field"] as? String)
                    }
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 100)
    }
}
