import { DOMParser, onWarningStopParsing, type Document, type Element, type Node } from '@xmldom/xmldom';

export const SAML_ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';

/** The attribute names xml-crypto resolves a reference URI against (its `idAttributes`). */
const ID_ATTRIBUTES = ['ID', 'Id', 'id'];

const ELEMENT_NODE = 1;

/**
 * Parses XML strictly: any warning or error (not only fatal ones) stops parsing, so a document the
 * parser had to repair is never used. Throws on malformed input.
 */
export function parseXml(xml: string): Document {
  return new DOMParser({ onError: onWarningStopParsing, locator: false }).parseFromString(xml, 'text/xml');
}

const isElement = (node: Node): node is Element => node.nodeType === ELEMENT_NODE;

/** The direct child elements of `parent` with this namespace and local name. */
export function childElements(parent: Element, namespace: string, localName: string): Element[] {
  const out: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (isElement(node) && node.namespaceURI === namespace && node.localName === localName) out.push(node);
  }
  return out;
}

/** Every element below (and including) `root` that matches `predicate`, in document order. */
export function descendantElements(root: Element, predicate: (element: Element) => boolean): Element[] {
  const out: Element[] = [];
  const walk = (element: Element): void => {
    if (predicate(element)) out.push(element);
    for (let node = element.firstChild; node; node = node.nextSibling) if (isElement(node)) walk(node);
  };
  walk(root);
  return out;
}

/** Elements carrying `id` in any attribute xml-crypto would resolve a `#id` reference against. */
export function elementsWithId(root: Element, id: string): Element[] {
  return descendantElements(root, (e) => ID_ATTRIBUTES.some((name) => e.getAttribute(name) === id));
}

export const isNamed = (element: Element, namespace: string, localName: string): boolean =>
  element.namespaceURI === namespace && element.localName === localName;

/**
 * The text of an element: all its descendant text, comments excluded. Never `firstChild.data`,
 * which an inserted comment cuts short (`admin@example.test<!---->.evil.com`).
 */
export const textOf = (element: Element): string => (element.textContent ?? '').trim();
