// props.js: the editable table of an alert's properties per language (compose and correct).
// Each row is language + property name + value, all free text; the event's properties are
// {"<name>_<language>": value}, or {"<name>": value} when the row has no language.

import { el, clear } from './dom.js';

export class PropertyRows {
  /**
   * @param {HTMLTableElement} table  the table; rows go into its <tbody>
   * @param {string} prefix  id prefix of the inputs: 'prop' gives prop-lang-0, prop-name-0, prop-value-0
   * @param {() => void} onChange  called when the editor changes a row or removes one
   */
  constructor(table, prefix, onChange = () => {}) {
    this.body = table.tBodies[0] || table.appendChild(document.createElement('tbody'));
    this.prefix = prefix;
    this.onChange = onChange;
    this.body.addEventListener('input', () => this.onChange());
  }

  /** Adds a row (an empty one changes no property) and returns its language input. */
  addRow({ lang = '', name = '', value = '' } = {}) {
    const index = this.body.rows.length;
    const row = el('tr', { className: 'prop-row' });
    const cell = (kind, text, attributes) => {
      const id = `${this.prefix}-${kind}-${index}`;
      const input = el('input', { type: 'text', id, autocomplete: 'off', spellcheck: kind === 'value', ...attributes });
      input.value = text;
      input.dataset.kind = kind;
      const label = el('label', { htmlFor: id, className: 'visually-hidden', text: labelText(kind, index) });
      return el('td', {}, label, input);
    };
    row.append(
      cell('lang', lang, { list: 'language-suggestions', placeholder: 'English', className: 'prop-lang' }),
      cell('name', name, { list: 'property-suggestions', placeholder: 'News', className: 'prop-name' }),
      cell('value', value, { placeholder: 'The alert text in this language', className: 'prop-value' }),
    );
    const remove = el('button', { type: 'button', className: 'prop-remove secondary', text: 'Remove' });
    remove.setAttribute('aria-label', `Remove row ${index + 1}`);
    remove.addEventListener('click', () => this.removeRow(row));
    row.append(el('td', {}, remove));
    this.body.append(row);
    return row.querySelector('input');
  }

  /** Removes a row and numbers the others again from 0. */
  removeRow(row) {
    const focusTarget = row.nextElementSibling || row.previousElementSibling;
    row.remove();
    Array.from(this.body.rows).forEach((each, index) => {
      for (const input of each.querySelectorAll('input')) {
        const kind = input.dataset.kind;
        input.id = `${this.prefix}-${kind}-${index}`;
        const label = input.previousElementSibling;
        label.htmlFor = input.id;
        label.textContent = labelText(kind, index);
      }
      each.querySelector('button').setAttribute('aria-label', `Remove row ${index + 1}`);
    });
    if (focusTarget) focusTarget.querySelector('input').focus();
    this.onChange();
  }

  /** Removes every row. */
  reset() {
    clear(this.body);
  }

  /**
   * The event's properties and the problems found. A row with an empty value is left out
   * (an empty property would end a template's fallback chain).
   * @returns {{properties: Object<string,string>, problems: string[], warnings: string[], count: number}}
   */
  read() {
    const properties = {};
    const problems = [];
    const warnings = [];
    Array.from(this.body.rows).forEach((row, index) => {
      const value = (kind) => row.querySelector(`input[data-kind="${kind}"]`).value;
      const lang = value('lang').trim();
      const name = value('name').trim();
      const text = value('value');
      if (text === '') return;
      if (!name) {
        problems.push(`Row ${index + 1} has a value but no property name (for example News).`);
        return;
      }
      const key = lang ? `${name}_${lang}` : name;
      if (Object.prototype.hasOwnProperty.call(properties, key)) {
        warnings.push(`Rows give ${key} twice; the last one counts.`);
      }
      properties[key] = text;
    });
    return { properties, problems, warnings, count: Object.keys(properties).length };
  }
}

function labelText(kind, index) {
  const names = { lang: 'Language', name: 'Property name', value: 'Value' };
  return `${names[kind]}, row ${index + 1}`;
}
