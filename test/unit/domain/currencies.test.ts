import { describe, expect, it } from "vitest";
import { ACTIVE_CURRENCIES, currencyMinorUnits, isActiveCurrency } from "../../../src/domain";

describe("active currencies (ISO 4217)", () => {
  it("have the minor units of the standard, whatever the platform's ICU says", () => {
    const table: Record<string, number> = {
      EUR: 2,
      USD: 2,
      JPY: 0,
      KRW: 0,
      CLP: 0,
      ISK: 0,
      VND: 0,
      XOF: 0,
      BHD: 3,
      KWD: 3,
      TND: 3,
      // ICU shows these with 0 digits; ISO 4217 gives them a minor unit.
      IQD: 3,
      LBP: 2,
      IRR: 2,
      // The newer codes.
      SLE: 2,
      ZWG: 2,
      XCG: 2,
      VES: 2,
      VED: 2,
    };
    for (const [code, units] of Object.entries(table)) expect(currencyMinorUnits(code), code).toBe(units);
  });

  it("leave out withdrawn codes, though Node 20's ICU still lists some of them", () => {
    for (const code of [
      "HRK",
      "SLL",
      "ZWL",
      "CUC",
      "BGN",
      "ANG",
      "MRO",
      "STD",
      "VEF",
      "BYR",
      "LTL",
      "LVL",
      "EEK",
    ]) {
      expect(isActiveCurrency(code), code).toBe(false);
      expect(currencyMinorUnits(code), code).toBeUndefined();
    }
  });

  it("leave out funds, units of account, metals and the testing codes", () => {
    for (const code of [
      "XAU",
      "XAG",
      "XPT",
      "XPD",
      "XTS",
      "XXX",
      "XDR",
      "XSU",
      "XUA",
      "XBA",
      "CLF",
      "USN",
      "BOV",
    ])
      expect(isActiveCurrency(code), code).toBe(false);
  });

  it("are three capital letters each, listed once, and nothing an object lookup would invent", () => {
    expect(ACTIVE_CURRENCIES.length).toBeGreaterThan(150);
    expect(new Set(ACTIVE_CURRENCIES).size).toBe(ACTIVE_CURRENCIES.length);
    for (const code of ACTIVE_CURRENCIES) expect(code).toMatch(/^[A-Z]{3}$/);
    for (const name of ["constructor", "__proto__", "toString", "eur", ""])
      expect(isActiveCurrency(name), name).toBe(false);
  });
});
