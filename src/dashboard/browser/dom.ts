/**
 * The few DOM helpers both views use. Everything the page shows from the API goes in as text (h's children become
 * text nodes), never as markup, so an order field can never become an element or run as code.
 */
import { DASHBOARD_CONFIG_ID, type DashboardConfig } from "./pageConfig.js";

/** The page's element of that id; a missing one is a mismatch between page.ts and this code, so it throws. */
export function $(id: string): HTMLElement {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element;
}

/** The page's element of that id and type (an input's value, a button's disabled), checked rather than cast. */
export function $as<T extends HTMLElement>(id: string, type: abstract new () => T): T {
  const element = $(id);
  if (!(element instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return element;
}

export function readConfig(): DashboardConfig {
  return JSON.parse($(DASHBOARD_CONFIG_ID).textContent ?? "") as DashboardConfig;
}

type AttributeValue = string | number | boolean | null | undefined | ((event: Event) => unknown);
/** What h() takes as children: text, elements, and lists of them; null, undefined and false are left out. */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

/**
 * An element with attributes and children. "class" sets the class; an "on…" function becomes a listener; true is
 * an empty attribute; null, undefined and false leave the attribute out.
 */
export function h(
  tag: string,
  attrs: Record<string, AttributeValue> = {},
  ...children: Child[]
): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "class") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  el.append(...flatten(children));
  return el;
}

function flatten(children: readonly Child[]): (Node | string)[] {
  return children.flatMap((child): (Node | string)[] => {
    if (child === null || child === undefined || child === false) return [];
    if (Array.isArray(child)) return flatten(child as readonly Child[]);
    return [child instanceof Node ? child : String(child)];
  });
}

/** Replaces an element's content; takes what h() takes as children (lists, nulls). */
export function fill(el: HTMLElement, ...children: Child[]): void {
  el.replaceChildren(...flatten(children));
}

export const pad = (n: number): string => String(n).padStart(2, "0");
