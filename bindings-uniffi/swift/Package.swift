// swift-tools-version:5.9
// The Swift binding: uniffi's generated sources (Sources/A2ANative/A2ANative.swift and the C
// module Sources/A2ANativeFFI, committed and checked up to date by ../test.sh) plus
// A2ANativeAsync.swift. Links the Rust library built by `cargo build -p a2a-native-uniffi`
// (../../target/debug); see ../README.md.
import PackageDescription

let rustLib = "../../target/debug"

let package = Package(
    name: "A2ANative",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [.library(name: "A2ANative", targets: ["A2ANative"])],
    targets: [
        .target(name: "A2ANativeFFI", path: "Sources/A2ANativeFFI"),
        .target(
            name: "A2ANative",
            dependencies: ["A2ANativeFFI"],
            path: "Sources/A2ANative",
            linkerSettings: [.linkedLibrary("a2a_native_uniffi"), .unsafeFlags(["-L", rustLib])]
        ),
        .testTarget(name: "A2ANativeTests", dependencies: ["A2ANative"], path: "Tests/A2ANativeTests"),
    ]
)
