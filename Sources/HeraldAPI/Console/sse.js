// sse.js: reads a Server-Sent Events stream from a fetch() Response body (EventSource cannot
// send an Authorization header). Handles messages split across chunks, CR/LF/CRLF line ends,
// multi-line data, and ':' comment lines (keep-alives).

/**
 * Parses SSE text fed in arbitrary chunks, calling onMessage(eventName, data) for each
 * message a blank line ends.
 */
export class EventStreamParser {
  constructor(onMessage) {
    this.onMessage = onMessage;
    this.buffer = '';
    this.eventName = '';
    this.data = [];
  }

  /** Feeds decoded text; `done` flushes a final line without its line end. */
  push(text, done = false) {
    this.buffer += text;
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < this.buffer.length; i += 1) {
        const char = this.buffer[i];
        if (char === '\n' || char === '\r') { end = i; break; }
      }
      if (end < 0) break;
      // A CR at the very end may be the first half of a CRLF: wait for the next chunk.
      if (this.buffer[end] === '\r' && end === this.buffer.length - 1 && !done) break;
      this.line(this.buffer.slice(start, end));
      start = end + (this.buffer[end] === '\r' && this.buffer[end + 1] === '\n' ? 2 : 1);
    }
    this.buffer = this.buffer.slice(start);
    if (done) {
      if (this.buffer) this.line(this.buffer);
      this.buffer = '';
    }
  }

  line(text) {
    if (text === '') {
      if (this.data.length > 0 || this.eventName) {
        this.onMessage(this.eventName || 'message', this.data.join('\n'));
      }
      this.eventName = '';
      this.data = [];
      return;
    }
    if (text.startsWith(':')) return; // a comment: keep-alive
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.eventName = value;
    else if (field === 'data') this.data.push(value);
    // id and retry are not used by the console.
  }
}

/**
 * Reads the whole stream of a fetch Response, calling onMessage(eventName, data); resolves
 * when the server ends it, rejects with an AbortError when the signal aborts.
 */
export async function readEventStream(response, onMessage, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  const parser = new EventStreamParser(onMessage);
  const cancel = () => { reader.cancel().catch(() => {}); };
  if (signal) signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        parser.push(decoder.decode(), true);
        return;
      }
      parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    if (signal) signal.removeEventListener('abort', cancel);
    if (signal && signal.aborted) throw new DOMException('aborted', 'AbortError');
  }
}
