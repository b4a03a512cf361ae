/**
 * The currencies an order may be priced in, and their minor units, from ISO 4217 itself rather than from the
 * platform's ICU data: ICU keeps withdrawn codes for formatting old amounts (Node 20 still lists HRK, SLL, ZWL,
 * CUC, BGN, ANG), and its digits are CLDR's display habits (0 for IQD, LBP, IRR), not the standard's.
 *
 * Source: ISO 4217 list one ("current currency & funds"), as the maintenance agency (SIX Financial Information)
 * publishes it, edition of 2026-01-01, which includes the amendments up to then: SLE for SLL, VES and VED both in
 * use, ZWG for ZWL (2024), XCG for ANG (2025), EUR for HRK (2023) and BGN (2026); CUC, MRO, STD, VEF, BYR, LTL,
 * LVL and EEK long gone. When an amendment adds or withdraws a code, change this table (and its test).
 *
 * Left out on purpose, though list one has them: what nobody pays an order in. Fund and index codes (BOV, CHE,
 * CHW, CLF, COU, MXV, USN, UYI, UYW), units of account (XAD, XDR, XSU, XUA, the bond market units XBA-XBD),
 * precious metals (XAG, XAU, XPD, XPT), the testing code XTS and XXX ("no currency").
 */

/** Codes by their ISO 4217 minor unit: how many decimals an amount in that currency has. */
const BY_MINOR_UNIT: Readonly<Record<0 | 2 | 3, string>> = {
  0: "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF",
  2:
    "AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF CNY COP " +
    "CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS " +
    "INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN " +
    "MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE " +
    "SOS SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VED VES WST XCD XCG YER ZAR " +
    "ZMW ZWG",
  3: "BHD IQD JOD KWD LYD OMR TND",
};

/** A Map, not an object: a lookup of "constructor" or "__proto__" must find nothing. */
const MINOR_UNITS: ReadonlyMap<string, number> = new Map(
  Object.entries(BY_MINOR_UNIT).flatMap(([units, codes]) =>
    codes.split(" ").map((code) => [code, Number(units)] as const),
  ),
);

/** The active ISO 4217 codes an order may use, sorted. */
export const ACTIVE_CURRENCIES: readonly string[] = [...MINOR_UNITS.keys()].sort();

/** True for the code of a currency in use (ISO 4217 list one, less funds and units of account). */
export function isActiveCurrency(code: string): boolean {
  return MINOR_UNITS.has(code);
}

/** The ISO 4217 minor unit of an active currency (JPY 0, EUR 2, BHD 3); undefined for any other code. */
export function currencyMinorUnits(code: string): number | undefined {
  return MINOR_UNITS.get(code);
}
