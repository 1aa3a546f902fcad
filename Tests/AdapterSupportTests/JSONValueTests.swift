import AdapterKit
import Foundation
import Testing

@Suite("JSONValue")
struct JSONValueTests {
    static func decode(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func everyKindIsReadAndNullIsKept() throws {
        let value = try Self.decode(#"{"s":"x","n":1.5,"b":true,"a":[1,null],"o":{"k":"v"},"z":null}"#)
        #expect(value["s"] == .string("x"))
        #expect(value["n"]?.number == 1.5)
        #expect(value["b"]?.bool == true)
        #expect(value["a"] == .array([.number(1), .null]))
        #expect(value["o"]?["k"]?.string == "v")
        #expect(value["z"] == .null)
        #expect(value["missing"] == nil)
    }

    @Test func numbersCompareAsNumbers() throws {
        #expect(try Self.decode("1") == Self.decode("1.0"))
        #expect(try Self.decode("2").integer == 2)
        #expect(try Self.decode("2.5").integer == nil)
    }

    @Test func aNumberNoDoubleHoldsReadsAsNullAndTheRestStays() throws {
        let value = try Self.decode(#"{"huge":1e400,"kept":"yes"}"#)
        #expect(value["huge"] == .null)
        #expect(value["kept"]?.string == "yes")
    }

    @Test func theDescriptionIsCompactJSONWithSortedKeysAndEscapes() throws {
        let value = try Self.decode(#"{"b":[1,2.5,false],"a":"q\"\\\n\u0001"}"#)
        #expect(value.description == #"{"a":"q\"\\\n\u0001","b":[1,2.5,false]}"#)
        #expect(try Self.decode(value.description) == value)
    }

    @Test func encodingGivesBackTheSameValue() throws {
        let value = try Self.decode(#"{"a":[null,true,"t",{"x":-3}],"n":0.25}"#)
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }
}
