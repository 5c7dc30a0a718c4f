import HTTPTypes
import HeraldDomain
import Hummingbird
import NIOCore

extension Response {
    /// A JSON response written with the domain's order-preserving writer, so documents
    /// come back in the contract's field order.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
