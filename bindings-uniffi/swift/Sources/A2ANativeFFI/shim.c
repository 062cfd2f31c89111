// SwiftPM needs one source file in a C target; the module is the generated header.
