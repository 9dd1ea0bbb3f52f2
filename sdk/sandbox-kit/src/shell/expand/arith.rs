//! Arithmetic: `$(( ))`, `(( ))`, `let`, `for (( ; ; ))` and array
//! indices. The text is expanded first (`$x`, `$(cmd)`), then parsed by the
//! shell grammar's arithmetic parser and evaluated on 64-bit integers that
//! wrap as bash's do. A variable named bare holds a number or an
//! expression of its own; an unset or empty one is 0.

use brush_parser::ast::{
    ArithmeticExpr, ArithmeticTarget, BinaryOperator, UnaryAssignmentOperator, UnaryOperator,
};

use super::Expander;
use crate::shell::context::Interrupt;

/// How deeply a variable's value may name variables holding expressions.
const MAX_INDIRECTION: u32 = 32;

impl Expander<'_, '_> {
    /// The value of the arithmetic text `text`, or why the shell stops.
    pub(in crate::shell) fn arithmetic(&mut self, text: &str) -> Result<i64, Interrupt> {
        let expanded = self.text(text)?;
        self.evaluate_text(&expanded, 0)
    }

    fn evaluate_text(&mut self, text: &str, depth: u32) -> Result<i64, Interrupt> {
        if depth > MAX_INDIRECTION {
            return Err(self.fail(format!("{text}: expression recursion level exceeded")));
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(0);
        }
        if let Ok(value) = trimmed.parse::<i64>() {
            return Ok(value);
        }
        match brush_parser::arithmetic::parse(trimmed) {
            Ok(expr) => self.eval(&expr, depth),
            Err(_) => Err(self.fail(format!("{trimmed}: syntax error in expression"))),
        }
    }

    fn eval(&mut self, expr: &ArithmeticExpr, depth: u32) -> Result<i64, Interrupt> {
        Ok(match expr {
            ArithmeticExpr::Literal(value) => *value,
            ArithmeticExpr::Reference(target) => self.load(target, depth)?,
            ArithmeticExpr::UnaryOp(op, operand) => {
                let value = self.eval(operand, depth)?;
                match op {
                    UnaryOperator::UnaryPlus => value,
                    UnaryOperator::UnaryMinus => value.wrapping_neg(),
                    UnaryOperator::BitwiseNot => !value,
                    UnaryOperator::LogicalNot => i64::from(value == 0),
                }
            }
            ArithmeticExpr::BinaryOp(BinaryOperator::LogicalAnd, left, right) => {
                i64::from(self.eval(left, depth)? != 0 && self.eval(right, depth)? != 0)
            }
            ArithmeticExpr::BinaryOp(BinaryOperator::LogicalOr, left, right) => {
                i64::from(self.eval(left, depth)? != 0 || self.eval(right, depth)? != 0)
            }
            ArithmeticExpr::BinaryOp(op, left, right) => {
                let left = self.eval(left, depth)?;
                let right = self.eval(right, depth)?;
                self.binary(*op, left, right)?
            }
            ArithmeticExpr::Conditional(condition, then, otherwise) => {
                if self.eval(condition, depth)? != 0 {
                    self.eval(then, depth)?
                } else {
                    self.eval(otherwise, depth)?
                }
            }
            ArithmeticExpr::Assignment(target, value) => {
                let value = self.eval(value, depth)?;
                self.store(target, value, depth)?;
                value
            }
            ArithmeticExpr::BinaryAssignment(op, target, value) => {
                let current = self.load(target, depth)?;
                let operand = self.eval(value, depth)?;
                let value = self.binary(*op, current, operand)?;
                self.store(target, value, depth)?;
                value
            }
            ArithmeticExpr::UnaryAssignment(op, target) => {
                let current = self.load(target, depth)?;
                let (stored, result) = match op {
                    UnaryAssignmentOperator::PrefixIncrement => {
                        (current.wrapping_add(1), current.wrapping_add(1))
                    }
                    UnaryAssignmentOperator::PrefixDecrement => {
                        (current.wrapping_sub(1), current.wrapping_sub(1))
                    }
                    UnaryAssignmentOperator::PostfixIncrement => (current.wrapping_add(1), current),
                    UnaryAssignmentOperator::PostfixDecrement => (current.wrapping_sub(1), current),
                };
                self.store(target, stored, depth)?;
                result
            }
        })
    }

    fn binary(&mut self, op: BinaryOperator, left: i64, right: i64) -> Result<i64, Interrupt> {
        Ok(match op {
            BinaryOperator::Power => {
                if right < 0 {
                    return Err(self.fail("exponent less than 0".to_owned()));
                }
                left.wrapping_pow(u32::try_from(right).unwrap_or(u32::MAX))
            }
            BinaryOperator::Multiply => left.wrapping_mul(right),
            BinaryOperator::Divide | BinaryOperator::Modulo if right == 0 => {
                return Err(self.fail("division by 0".to_owned()));
            }
            BinaryOperator::Divide => left.wrapping_div(right),
            BinaryOperator::Modulo => left.wrapping_rem(right),
            BinaryOperator::Comma => right,
            BinaryOperator::Add => left.wrapping_add(right),
            BinaryOperator::Subtract => left.wrapping_sub(right),
            BinaryOperator::ShiftLeft => left.wrapping_shl(u32::try_from(right).unwrap_or(0)),
            BinaryOperator::ShiftRight => left.wrapping_shr(u32::try_from(right).unwrap_or(0)),
            BinaryOperator::LessThan => i64::from(left < right),
            BinaryOperator::LessThanOrEqualTo => i64::from(left <= right),
            BinaryOperator::GreaterThan => i64::from(left > right),
            BinaryOperator::GreaterThanOrEqualTo => i64::from(left >= right),
            BinaryOperator::Equals => i64::from(left == right),
            BinaryOperator::NotEquals => i64::from(left != right),
            BinaryOperator::BitwiseAnd => left & right,
            BinaryOperator::BitwiseXor => left ^ right,
            BinaryOperator::BitwiseOr => left | right,
            BinaryOperator::LogicalAnd => i64::from(left != 0 && right != 0),
            BinaryOperator::LogicalOr => i64::from(left != 0 || right != 0),
        })
    }

    /// The value a variable or array element holds, as a number.
    fn load(&mut self, target: &ArithmeticTarget, depth: u32) -> Result<i64, Interrupt> {
        let text = match target {
            ArithmeticTarget::Variable(name) => {
                if self.ctx.options.nounset && self.ctx.vars.get(name).is_none() {
                    return Err(self.unbound(name));
                }
                self.ctx.vars.scalar(name).unwrap_or_default().to_owned()
            }
            ArithmeticTarget::ArrayElement(name, index) => {
                let index = self.eval(index, depth)?;
                self.element(name, index).unwrap_or_default()
            }
        };
        self.evaluate_text(&text, depth + 1)
    }

    /// Stores `value` into a variable or array element.
    fn store(
        &mut self,
        target: &ArithmeticTarget,
        value: i64,
        depth: u32,
    ) -> Result<(), Interrupt> {
        match target {
            ArithmeticTarget::Variable(name) => self.ctx.vars.set(name, value.to_string()),
            ArithmeticTarget::ArrayElement(name, index) => {
                let index = self.eval(index, depth)?;
                let index = usize::try_from(index)
                    .map_err(|_| self.fail(format!("{name}[{index}]: bad array subscript")))?;
                self.ctx.vars.set_element(name, index, value.to_string());
            }
        }
        Ok(())
    }
}
